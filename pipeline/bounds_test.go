package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const leafComponent = `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: leaf}
image: busybox
command: [echo, hi]
`

// writeDoubling writes levels pipeline files in dir, level k using level
// k+1 twice as step components, and returns the outermost one's path. kfp
// writes KFP graph components (each task's componentRef a url to the next
// level) under one pipectl pipeline.
func writeDoubling(t testing.TB, dir string, levels int, kfp bool) string {
	t.Helper()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("leaf.yaml", leafComponent)
	if kfp {
		write("g0.yaml", "name: g0\nimplementation:\n  container: {image: busybox, command: [echo, hi]}\n")
		for k := 1; k < levels; k++ {
			write(fmt.Sprintf("g%d.yaml", k), fmt.Sprintf(`name: g%d
implementation:
  graph:
    tasks:
      a: {componentRef: {url: g%d.yaml}}
      b: {componentRef: {url: g%d.yaml}}
`, k, k-1, k-1))
		}
		write("main.yaml", fmt.Sprintf(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: main}
steps:
  - {name: a, component: g%d.yaml}
  - {name: b, component: g%d.yaml}
`, levels-1, levels-1))
		return filepath.Join(dir, "main.yaml")
	}
	write("p0.yaml", "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p0}\nsteps:\n  - {name: a, component: leaf.yaml}\n")
	for k := 1; k <= levels; k++ {
		write(fmt.Sprintf("p%d.yaml", k), fmt.Sprintf(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p%d}
steps:
  - {name: a, component: p%d.yaml}
  - {name: b, component: p%d.yaml}
`, k, k-1, k-1))
	}
	return filepath.Join(dir, fmt.Sprintf("p%d.yaml", levels))
}

// TestNestingBounds: pipelines (and KFP graphs) that each use the next one
// twice, 25 levels deep, fail at once with a positioned error naming the
// chain instead of expanding 33 million steps; a chain deeper than
// MaxNestingDepth fails too; 10 levels (1024 steps) load.
func TestNestingBounds(t *testing.T) {
	for _, kfp := range []bool{false, true} {
		t.Run(fmt.Sprintf("kfp=%v", kfp), func(t *testing.T) {
			p, err := Load(writeDoubling(t, t.TempDir(), 10, kfp))
			if err != nil {
				t.Fatalf("10 levels: %v", err)
			}
			if n := len(p.Steps); n != 1024 {
				t.Errorf("10 levels: %d steps, want 1024", n)
			}
			_, err = Load(writeDoubling(t, t.TempDir(), 25, kfp))
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("nested pipelines expand to more than %d steps", MaxNestedSteps)) || !strings.Contains(err.Error(), " uses ") {
				t.Errorf("25 levels: %v, want a bound on nested steps naming the chain", err)
			}
		})
	}
	dir := t.TempDir()
	for k := 0; k <= MaxNestingDepth+5; k++ {
		body := fmt.Sprintf("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p%d}\nsteps:\n  - {name: a, component: p%d.yaml}\n", k, k+1)
		if k == MaxNestingDepth+5 {
			body = "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: last}\nsteps:\n  - {name: a, component: leaf.yaml}\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.yaml", k)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "leaf.yaml"), []byte(leafComponent), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(dir, "p0.yaml"))
	want := fmt.Sprintf("p%d.yaml:5:", MaxNestingDepth-1)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pipelines nested more than %d deep", MaxNestingDepth)) || !strings.Contains(err.Error(), want) {
		t.Errorf("a chain of %d: %v, want a depth error at %s", MaxNestingDepth+6, err, want)
	}
}

// BenchmarkNestingBound loads 25 levels of doubling pipelines: the bound
// makes it fail in milliseconds and a few MB.
func BenchmarkNestingBound(b *testing.B) {
	path := writeDoubling(b, b.TempDir(), 25, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err == nil {
			b.Fatal("loaded")
		}
	}
}

// TestNestedNameTooLong: five levels of 63-character step names, joined as
// OUTER.INNER, make a 319-byte name that no file system takes as a
// directory name: validate refuses it at the outer step's name instead of
// run failing with 'file name too long'.
func TestNestedNameTooLong(t *testing.T) {
	dir := t.TempDir()
	name := func(k int) string { return fmt.Sprintf("s%d-", k) + strings.Repeat("x", 60) }
	if err := os.WriteFile(filepath.Join(dir, "leaf.yaml"), []byte(leafComponent), 0o644); err != nil {
		t.Fatal(err)
	}
	comp := "leaf.yaml"
	for k := 0; k < 5; k++ {
		body := fmt.Sprintf("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p%d}\nsteps:\n  - {name: %s, component: %s}\n", k, name(k), comp)
		comp = fmt.Sprintf("p%d.yaml", k)
		if err := os.WriteFile(filepath.Join(dir, comp), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(filepath.Join(dir, comp))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("expected at most %d bytes", MaxStepNameLen)) || !strings.Contains(err.Error(), ".name:") {
		t.Errorf("Load: %v, want the expanded name refused at a step's name", err)
	}
	// Two levels of 50 characters (101 bytes) load.
	short := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: q}\nsteps:\n  - {name: " + strings.Repeat("a", 50) + ", component: q0.yaml}\n"
	inner := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: q0}\nsteps:\n  - {name: " + strings.Repeat("b", 50) + ", component: leaf.yaml}\n"
	if err := os.WriteFile(filepath.Join(dir, "q0.yaml"), []byte(inner), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "q.yaml"), []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "q.yaml")); err != nil {
		t.Errorf("two levels of 50 characters: %v", err)
	}
}
