package artifacts

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocalNoLinksNoFIFOs: a symbolic link planted in a local store (to a
// file, or as a directory on the way) is never followed by Get, Stat,
// GetRange or List, so nothing outside the store is served; a named pipe as
// run.json or as an output fails at once instead of blocking the reader.
func TestLocalNoLinksNoFIFOs(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside the store\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "r1/a/out/ok", strings.NewReader("inside"), -1); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(secret, filepath.Join(s.Dir(), "r1", "a", "out", "link")))
	must(os.Symlink(outside, filepath.Join(s.Dir(), "r1", "a", "dirlink")))
	must(syscall.Mkfifo(filepath.Join(s.Dir(), "r1", "a", "out", "fifo"), 0o644))
	must(os.MkdirAll(filepath.Join(s.Dir(), "r2"), 0o755))
	must(syscall.Mkfifo(filepath.Join(s.Dir(), "r2", "run.json"), 0o644))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, key := range []string{"r1/a/out/link", "r1/a/dirlink/secret", "r1/a/out/fifo", "r2/run.json"} {
			if r, err := s.Get(ctx, key); !errors.Is(err, ErrNotRegular) {
				if err == nil {
					b, _ := io.ReadAll(r)
					r.Close()
					t.Errorf("Get(%s) read %q, want ErrNotRegular", key, b)
				} else {
					t.Errorf("Get(%s): %v, want ErrNotRegular", key, err)
				}
			}
			if r, err := GetRange(ctx, s, key, 1, -1); !errors.Is(err, ErrNotRegular) {
				if err == nil {
					r.Close()
				}
				t.Errorf("GetRange(%s): %v, want ErrNotRegular", key, err)
			}
			if _, err := s.Stat(ctx, key); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Stat(%s): %v, want ErrNotRegular", key, err)
			}
		}
		objs, err := s.List(ctx, "r1/", true)
		if err != nil || len(objs) != 1 || objs[0].Key != "r1/a/out/ok" {
			t.Errorf("List(r1/, recursive): %v, %v; want only r1/a/out/ok", objs, err)
		}
		objs, err = s.List(ctx, "r1/a/out/", false)
		if err != nil || len(objs) != 1 || objs[0].Key != "r1/a/out/ok" {
			t.Errorf("List(r1/a/out/): %v, %v; want only r1/a/out/ok", objs, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading the store still blocked after a minute")
	}
}
