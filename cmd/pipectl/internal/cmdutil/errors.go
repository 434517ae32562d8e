package cmdutil

import (
	"pipectl.dev/pipectl/cmd/internal/podutil"
)

// ExitError ends a command with a given exit code (podutil.ExitError).
type ExitError = podutil.ExitError

// Exit codes.
const (
	ExitOK        = podutil.ExitOK
	ExitError1    = podutil.ExitError1
	ExitUsage     = podutil.ExitUsage
	ExitCancelled = podutil.ExitCancelled
)

// FlagError marks a usage problem: wrong flags or arguments.
type FlagError = podutil.FlagError

// FlagErrorf returns a *FlagError.
func FlagErrorf(format string, args ...any) error { return podutil.FlagErrorf(format, args...) }

// Code maps an error to the process's exit code.
func Code(err error) int { return podutil.Code(err) }
