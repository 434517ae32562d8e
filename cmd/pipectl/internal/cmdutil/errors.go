package cmdutil

import (
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/pipectl/internal/podutil"
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

// RequireFlags returns a usage error naming every flag left empty (podutil.RequireFlags).
func RequireFlags(hint string, nameValues ...string) error {
	return podutil.RequireFlags(hint, nameValues...)
}

// CommandAfterDash returns the command given after "--" (podutil.CommandAfterDash).
func CommandAfterDash(cmd *cobra.Command, args []string) ([]string, error) {
	return podutil.CommandAfterDash(cmd, args)
}
