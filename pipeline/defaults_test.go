package pipeline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDistributedDefaults: the pipeline's distributed defaults reach each
// distributed step that does not set its own, not one that does.
func TestDistributedDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	body := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: defaults}
distributed: {stallTimeout: 10m, startupTimeout: 3m}
steps:
  - name: plain
    component: {metadata: {name: c}, image: busybox, command: [true]}
    distributed: {nodes: 2}
  - name: own
    component: {metadata: {name: c}, image: busybox, command: [true]}
    distributed: {nodes: 2, stallTimeout: 30s, startupTimeout: 1m}
finally:
  - name: last
    component: {metadata: {name: c}, image: busybox, command: [true]}
    distributed: {nodes: 2}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]time.Duration{
		"plain": {10 * time.Minute, 3 * time.Minute},
		"own":   {30 * time.Second, time.Minute},
		"last":  {10 * time.Minute, 3 * time.Minute},
	}
	for _, s := range p.Steps {
		d := s.Distributed
		if got := [2]time.Duration{d.StallTimeout.Duration, d.StartupTimeout.Duration}; got != want[s.Name] {
			t.Errorf("step %s: stallTimeout, startupTimeout = %v, want %v", s.Name, got, want[s.Name])
		}
	}
}
