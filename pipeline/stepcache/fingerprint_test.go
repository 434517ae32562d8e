package stepcache

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"pipectl.dev/pipectl/components"
)

// TestFingerprintStreams: a large file named in a component's command is
// hashed in a fixed amount of memory, a change to it changes the
// fingerprint, and a named pipe is taken for an ordinary argument (never
// opened for a blocking read).
func TestFingerprintStreams(t *testing.T) {
	dir := t.TempDir()
	const size = 64 << 20
	big := filepath.Join(dir, "weights.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := &components.Invocation{Component: &components.Program{Command: []string{"python3", "weights.bin", "pipe"}, Dir: dir}}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fp1, err := Fingerprint(t.Context(), inv, nil, Shape{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("fingerprinting a %d MiB file allocated %d MiB, want it streamed (< 8 MiB)", size>>20, alloc>>20)
	}
	f, err = os.OpenFile(big, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{1}, size-1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fp2, err := Fingerprint(t.Context(), inv, nil, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if fp1 == fp2 {
		t.Error("changing the last byte of a file the command names did not change the fingerprint")
	}
}

// TestFingerprintFramework: the framework is part of the gang's shape; a
// torch step's fingerprint is the one it had before frameworks.
func TestFingerprintFramework(t *testing.T) {
	inv := &components.Invocation{Component: &components.Program{Command: []string{"python3", "train.py"}}}
	fp := func(s Shape) string {
		f, err := Fingerprint(t.Context(), inv, nil, s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	torch, xgb, jax := fp(Shape{Nodes: 2, Procs: 1}), fp(Shape{Nodes: 2, Procs: 1, Framework: "xgboost"}), fp(Shape{Nodes: 2, Procs: 1, Framework: "jax"})
	if torch == xgb || xgb == jax || torch == jax {
		t.Errorf("fingerprints torch %s, xgboost %s, jax %s: want all different", torch, xgb, jax)
	}
}
