package step

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// Log is a step's log as it is written: a file in the order of its lines,
// stored at <run>/<step>/step.log when the step ends (Job.Log) and, with
// Live, every LiveEvery while it grows, so that readers (pipectl ui,
// pipectl logs) see it grow.
type Log struct {
	mu sync.Mutex
	f  *os.File
	// temp says the file is the log's own, removed by Close.
	temp bool
	// Live copies the log to the store while the step runs.
	Live bool
}

// LiveEvery is how often a Live log is copied to the store while it grows.
const LiveEvery = 2 * time.Second

// NewLog starts a log in a file of its own in dir ("" for the temporary
// directory), removed by Close.
func NewLog(dir string) (*Log, error) {
	f, err := os.CreateTemp(dir, ".step-log-*")
	if err != nil {
		return nil, err
	}
	return &Log{f: f, temp: true}, nil
}

// CreateLog starts a log in dir/step.log, which Close leaves in place.
func CreateLog(dir string) (*Log, error) {
	f, err := os.Create(filepath.Join(dir, "step.log"))
	if err != nil {
		return nil, err
	}
	return &Log{f: f}, nil
}

// Write appends p to the log.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// Tee returns a writer that writes to w and to the log.
func (l *Log) Tee(w io.Writer) io.Writer { return teeWriter{l: l, w: w} }

type teeWriter struct {
	l *Log
	w io.Writer
}

func (t teeWriter) Write(p []byte) (int, error) {
	_, _ = t.l.Write(p)
	return t.w.Write(p)
}

// Upload stores what the log holds at key. Lines written meanwhile are not
// held up: the copy reads what was there when it began.
func (l *Log) Upload(ctx context.Context, s artifacts.Store, key string) error {
	size, err := l.size()
	if err != nil {
		return err
	}
	return s.Put(ctx, key, io.NewSectionReader(l.f, 0, size), size)
}

// Close closes the log's file (and removes it when it is the log's own).
func (l *Log) Close() {
	l.f.Close()
	if l.temp {
		os.Remove(l.f.Name())
	}
}

// size is how much the log holds.
func (l *Log) size() (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Seek(0, io.SeekCurrent)
}

// copyWhileRunning copies a Live log to key every LiveEvery while it
// grows, until the returned func is called; that func returns once no copy
// is under way, so the final upload comes last.
func (l *Log) copyWhileRunning(ctx context.Context, s artifacts.Store, key string) (stop func()) {
	if !l.Live {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(LiveEvery)
		defer tick.Stop()
		var copied int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if n, err := l.size(); err == nil && n != copied {
				if l.Upload(ctx, s, key) == nil {
					copied = n
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
