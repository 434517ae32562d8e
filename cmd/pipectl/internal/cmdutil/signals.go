package cmdutil

import (
	"os"
	"os/signal"
	"syscall"
)

// StopSignals returns given when a test supplies it, else a channel that
// receives SIGINT and SIGTERM, and the function that stops that delivery.
func StopSignals(given <-chan os.Signal) (<-chan os.Signal, func()) {
	if given != nil {
		return given, func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}
