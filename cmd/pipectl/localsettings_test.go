package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleInTheUsersShell: after make demo, the README's next commands
// run as typed in a shell whose python3 cannot import torch (a pyenv shim
// or a venv first on PATH, as on the machine of the issue), without the
// Makefile's PATH: ensure-torch.sh --settings (what make demo runs) writes
// pipectl.local.yaml at the top of the checkout, and `pipectl run` puts the
// folder it names before the steps' PATH. Without the file the same
// commands fail with the shell's python3.
func TestExampleInTheUsersShell(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildPipectl(t)
	// A checkout: the example's folder, under which the settings are found.
	top := t.TempDir()
	if err := os.CopyFS(filepath.Join(top, "examples", "attrition"), os.DirFS(filepath.Join(repo, "examples", "attrition"))); err != nil {
		t.Fatal(err)
	}
	shim := t.TempDir()
	if err := os.WriteFile(filepath.Join(shim, "python3"), []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy' (the shell's python3)\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + shim + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	shell := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = top, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	// Small data: the commands are the README's, the sizes are the test's.
	small := []string{"-p", "rows=3000", "-p", "epochs=1"}
	runArgs := append([]string{"run", "examples/attrition/pipeline.yaml", "--no-cache"}, small...)

	out, err := shell(bin, runArgs...)
	if err == nil || !strings.Contains(out, "the shell's python3") {
		t.Fatalf("without pipectl.local.yaml, want the shell's python3 to fail the run; err %v, output:\n%s", err, out)
	}

	if out, err := shell(filepath.Join(repo, "examples", "attrition", "ensure-torch.sh"), "--settings", "pipectl.local.yaml"); err != nil {
		t.Fatalf("ensure-torch.sh --settings: %v\n%s", err, out)
	}
	settings, err := os.ReadFile(filepath.Join(top, "pipectl.local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pipectl.local.yaml:\n%s", settings)

	for _, args := range [][]string{runArgs, append([]string{"run", "examples/attrition/pipeline.yaml", "-p", "epochs=2"}, small[:2]...)} {
		out, err := shell(bin, args...)
		if err != nil {
			t.Fatalf("pipectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(out, "Steps' PATH begins with ") || !strings.Contains(out, "pipectl.local.yaml") || !strings.Contains(out, "evaluate     succeeded") {
			t.Errorf("pipectl %s: want the settings named and evaluate succeeded; output:\n%s", strings.Join(args, " "), out)
		}
	}
	// From another folder, the file is found above the pipeline file, not the working directory.
	sub := filepath.Join(top, "examples")
	cmd := exec.Command(bin, "run", "attrition/pipeline.yaml", "--no-cache", "-p", "rows=3000", "-p", "epochs=1")
	cmd.Dir, cmd.Env = sub, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pipectl run from examples/: %v\n%s", err, out)
	}
}
