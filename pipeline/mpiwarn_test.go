package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An mpi step whose command is not an MPI launcher loads with a warning at
// its framework's line; one running mpirun (or a shell script that does)
// loads without.
func TestMPICommandWarning(t *testing.T) {
	for _, tc := range []struct {
		command string
		warn    bool
	}{
		{`[python3, train.py]`, true},
		{`[mpirun, python3, train.py]`, false},
		{`[/usr/bin/mpiexec.hydra, -n, "4", x]`, false},
		{`[bash, -c, "cd src && mpirun python3 train.py"]`, false},
	} {
		file := filepath.Join(t.TempDir(), "p.yaml")
		src := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - name: train
    component:
      metadata: {name: train}
      image: python:3.12
      command: ` + tc.command + `
    distributed:
      nodes: 2
      framework: mpi
`
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(file)
		if err != nil {
			t.Fatalf("%s: %v", tc.command, err)
		}
		got := strings.Join(p.Warnings, "\n")
		want := file + ":12:"
		if tc.warn != strings.Contains(got, "is not an MPI launcher") || tc.warn && !strings.Contains(got, want) {
			t.Errorf("command %s: warnings %q: want a warning at %s: %v", tc.command, got, want, tc.warn)
		}
	}
}
