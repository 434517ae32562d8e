package podutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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

// RequireFlags returns a usage error naming every flag left empty, given as
// name, value pairs ("--run", opts.Run, ...); hint, if any, follows the list.
func RequireFlags(hint string, nameValues ...string) error {
	var missing []string
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] == "" {
			missing = append(missing, nameValues[i])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := "missing " + strings.Join(missing, ", ")
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return &FlagError{Err: errors.New(msg)}
}

// CommandAfterDash returns the command given after "--", refusing any other
// positional argument.
func CommandAfterDash(cmd *cobra.Command, args []string) ([]string, error) {
	if n := cmd.ArgsLenAtDash(); n > 0 || (n < 0 && len(args) > 0) {
		return nil, FlagErrorf("unexpected argument %q (a command goes after --)", args[0])
	}
	return args, nil
}
