package process

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartLooksUpTheProgramInItsOwnPATH: a program named without a slash
// is the one the PATH of its environment finds, not pipectl's own.
func TestStartLooksUpTheProgramInItsOwnPATH(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pipectl-test-hello"), []byte("#!/bin/sh\necho from the step PATH\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := Process{Argv: []string{"pipectl-test-hello"}, Env: []string{"PATH=/nonexistent", "PATH=" + dir + ":/usr/bin:/bin"}, Stdout: &out, Stderr: &out}
	if err := Run(context.Background(), p, DefaultGracePeriod); err != nil {
		t.Fatalf("Run: %v (%s)", err, out.String())
	}
	if got := out.String(); got != "from the step PATH\n" {
		t.Errorf("output %q", got)
	}
}

// TestStartMissingProgram: a program that is not found fails with exit
// code 127 and says so; one that is not executable, 126.
func TestStartMissingProgram(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv0 string
		code  int
		msg   string
	}{
		{"pipectl-no-such-program", 127, "program not found: pipectl-no-such-program is in no folder of the PATH"},
		{"/nonexistent/train.sh", 127, "program not found: /nonexistent/train.sh"},
		{notExec, 126, "program not executable: " + notExec},
	} {
		err := Run(context.Background(), Process{Argv: []string{tc.argv0}, Env: []string{"PATH=/usr/bin:/bin"}}, DefaultGracePeriod)
		if got := ExitCode(err); got != tc.code {
			t.Errorf("%s: exit code %d, want %d (%v)", tc.argv0, got, tc.code, err)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want it to begin %q", tc.argv0, err, tc.msg)
		}
	}
}
