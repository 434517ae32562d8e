package cmdutil

import (
	"errors"
	"fmt"
)

// ExitError ends a command with a given exit code. When Silent, the message
// was already shown and is not printed again.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit codes.
const (
	ExitOK        = 0
	ExitError1    = 1
	ExitUsage     = 2
	ExitCancelled = 130
)

// FlagError marks a usage problem: wrong flags or arguments.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a *FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// Code maps an error to the process's exit code.
func Code(err error) int {
	var ee *ExitError
	var fe *FlagError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &fe):
		return ExitUsage
	default:
		return ExitError1
	}
}
