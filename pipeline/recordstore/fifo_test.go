package recordstore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// TestListRunsFIFORecord: a named pipe as a run's run.json is skipped by
// ListRuns at once, never blocking it (the store refuses to open it).
func TestListRunsFIFORecord(t *testing.T) {
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir(), "r2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(s.Dir(), "r2", "run.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if runs, err := ListRuns(context.Background(), s, io.Discard); err != nil || len(runs) != 0 {
			t.Errorf("ListRuns: %v, %v; want no run (r2's record is a FIFO) and no error", runs, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("ListRuns still blocked after a minute")
	}
}
