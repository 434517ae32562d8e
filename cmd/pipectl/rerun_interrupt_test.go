package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRerunInterrupted: Ctrl-C while `run --rerun` fetches and unpacks the
// run's pipeline (a 64 MiB pack), or runs its steps, ends pipectl within a
// second with exit code 130, its temporary copy removed.
func TestRerunInterrupted(t *testing.T) {
	bin := buildPipectl(t)
	dir, store, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	src := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: slow}
params:
  secs: {type: int, default: 0}
steps:
  - name: s
    component:
      metadata: {name: s}
      inputs: [{name: secs, type: int}]
      command: [sh, -c, 'sleep "$0"', "{{inputs.secs}}"]
    inputs: {secs: "{{params.secs}}"}
`
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.bin"), bytes.Repeat([]byte("0123456789abcdef"), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PIPECTL_ARTIFACTS=file://"+store, "TMPDIR="+tmp)
	first := exec.Command(bin, "run", filepath.Join(dir, "p.yaml"))
	first.Env = env
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	for _, delay := range []time.Duration{0, 3 * time.Second} {
		var errOut bytes.Buffer
		rerun := exec.Command(bin, "run", "--rerun", "latest", "--from", "s", "-p", "secs=60", "--yes")
		rerun.Env, rerun.Stderr = env, &errOut
		if err := rerun.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the rerun's copy of the pipeline is being made, or
		// after delay into its step.
		deadline := time.Now().Add(20 * time.Second)
		for {
			if m, _ := filepath.Glob(filepath.Join(tmp, "pipectl-rerun-*")); len(m) > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(delay)
		sent := time.Now()
		if err := rerun.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := rerun.Wait()
		took := time.Since(sent)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("Ctrl-C %v into the rerun: %v, want exit code 130\n%s", delay, err, errOut.String())
		}
		if took > time.Second {
			t.Errorf("Ctrl-C %v into the rerun: exited %v later, want within a second", delay, took)
		}
		if m, _ := filepath.Glob(filepath.Join(tmp, "pipectl-rerun-*")); len(m) > 0 {
			t.Errorf("Ctrl-C %v into the rerun left %v", delay, m)
		}
		t.Logf("Ctrl-C %v into the rerun: exit 130 %v later", delay, took)
	}
}
