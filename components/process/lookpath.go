package process

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ExitNotFound and ExitNotExecutable are the exit codes recorded for a
// program that could not be started: not found, or found but not
// executable (a shell's codes for the same failures).
const (
	ExitNotFound      = 127
	ExitNotExecutable = 126
)

// lookPath resolves a program named without a slash in the PATH of env
// (the last PATH entry, as the program would see it), so that the
// environment given to a program decides which one runs, not pipectl's own
// PATH. ok is false when env has no PATH or no match: exec's own lookup in
// pipectl's PATH then applies (and reports a program not found).
func lookPath(name string, env []string) (path string, ok bool) {
	if name == "" || strings.Contains(name, "/") {
		return "", false
	}
	list, found := "", false
	for _, kv := range env {
		if v, is := strings.CutPrefix(kv, "PATH="); is {
			list, found = v, true
		}
	}
	if !found {
		return "", false
	}
	for _, dir := range filepath.SplitList(list) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // the working directory: never searched (as exec.ErrDot)
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// startExitCode is the exit code recorded for a program that could not be
// started at all: 127 when it was not found, 126 when it was found but not
// executable, 0 when err is not such an error.
func startExitCode(err error) int {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return ExitNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, exec.ErrDot):
		return ExitNotExecutable
	}
	return 0
}
