package exec

import (
	"context"
	"io"
	"os"
	"sync"

	"pipectl.dev/pipectl/artifacts"
)

// stepLog keeps a copy of what a step writes to stdout and stderr, in
// order, in a file outside the work directory's inputs and outputs, to
// upload when the step ends.
type stepLog struct {
	mu sync.Mutex
	f  *os.File
}

func newStepLog(work string) (*stepLog, error) {
	f, err := os.CreateTemp(work, ".step-log-*")
	if err != nil {
		return nil, err
	}
	return &stepLog{f: f}, nil
}

// tee returns a writer that writes to w and to the kept log.
func (l *stepLog) tee(w io.Writer) io.Writer { return teeWriter{l: l, w: w} }

type teeWriter struct {
	l *stepLog
	w io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.l.mu.Lock()
	_, _ = t.l.f.Write(p)
	t.l.mu.Unlock()
	return t.w.Write(p)
}

// upload stores the log at key.
func (l *stepLog) upload(ctx context.Context, s artifacts.Store, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	r := io.NewSectionReader(l.f, 0, size)
	return s.Put(ctx, key, r, size)
}

func (l *stepLog) close() {
	l.f.Close()
	os.Remove(l.f.Name())
}
