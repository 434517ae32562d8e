package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// loadWithin runs load and fails the test if it takes more than 20 s: a
// loader must never block on what it reads.
func loadWithin(t *testing.T, load func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- load() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the loader blocked for 20 s")
		return nil
	}
}

// TestLoadSpecialFiles: pipeline and component files that are not regular
// files, or are too large, give a positioned error at once; nothing blocks
// on a named pipe or reads a device until memory runs out.
func TestLoadSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", yamlfile.MaxSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pipelineUsing := func(component string) string {
		p := filepath.Join(t.TempDir(), "pipeline.yaml")
		doc := fmt.Sprintf("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - name: a\n    component: %s\n", component)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		load func() error
		want string
	}{
		{"pipeline file is a FIFO", func() error { _, err := Load(fifo); return err }, fifo + ": a named pipe (FIFO), not a regular file"},
		{"pipeline file is /dev/zero", func() error { _, err := Load("/dev/zero"); return err }, "/dev/zero: a character device, not a regular file"},
		{"pipeline file is a directory", func() error { _, err := Load(dir); return err }, dir + ": a directory, not a regular file"},
		{"pipeline file is too large", func() error { _, err := Load(big); return err }, big + ": larger than the 16777216 bytes allowed"},
		{"component file is a FIFO", func() error { _, err := Load(pipelineUsing(fifo)); return err },
			"6:16: steps[0].component: cannot read component file " + fifo + ": not a regular file"},
		{"component file is /dev/zero", func() error { _, err := Load(pipelineUsing("/dev/zero")); return err },
			"6:16: steps[0].component: cannot read component file /dev/zero: not a regular file"},
		{"component loaded alone is a FIFO", func() error { _, err := components.Load(fifo); return err }, fifo + ": a named pipe (FIFO), not a regular file"},
		{"component loaded alone is /dev/zero", func() error { _, err := components.Load("/dev/zero"); return err }, "/dev/zero: a character device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := loadWithin(t, tc.load)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
