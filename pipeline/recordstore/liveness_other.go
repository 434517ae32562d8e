//go:build !linux && !darwin

package recordstore

// processStart cannot tell whether a process runs on this system: it says
// it does, so that no live run is shown as failed.
func processStart(int) (string, bool) { return "", true }
