package cmdutil

import (
	"context"
	"io"
	"os"
	"sync"

	"pipectl.dev/pipectl/artifacts"
)

// StepLog keeps a copy of what a step writes to stdout and stderr, in
// order, in a file outside the work directory's inputs and outputs, to
// upload when the step ends (`pipectl exec` and `pipectl launch` keep their
// step's log at artifacts.LogKey).
type StepLog struct {
	mu sync.Mutex
	f  *os.File
}

// NewStepLog starts a kept log in a file of dir ("" for the temporary
// directory).
func NewStepLog(dir string) (*StepLog, error) {
	f, err := os.CreateTemp(dir, ".step-log-*")
	if err != nil {
		return nil, err
	}
	return &StepLog{f: f}, nil
}

// Tee returns a writer that writes to w and to the kept log.
func (l *StepLog) Tee(w io.Writer) io.Writer { return teeWriter{l: l, w: w} }

type teeWriter struct {
	l *StepLog
	w io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.l.mu.Lock()
	_, _ = t.l.f.Write(p)
	t.l.mu.Unlock()
	return t.w.Write(p)
}

// Upload stores the log at key.
func (l *StepLog) Upload(ctx context.Context, s artifacts.Store, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	r := io.NewSectionReader(l.f, 0, size)
	return s.Put(ctx, key, r, size)
}

// Close removes the kept log's file.
func (l *StepLog) Close() {
	l.f.Close()
	os.Remove(l.f.Name())
}
