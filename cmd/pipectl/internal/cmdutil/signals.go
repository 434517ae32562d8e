package cmdutil

import (
	"os"

	"pipectl.dev/pipectl/cmd/internal/podutil"
)

// StopSignals returns given, else a channel of SIGINT and SIGTERM (podutil.StopSignals).
func StopSignals(given <-chan os.Signal) (<-chan os.Signal, func()) {
	return podutil.StopSignals(given)
}

// Stopper is a context that SIGINT or SIGTERM cancels (podutil.Stopper).
type Stopper = podutil.Stopper
