//go:build !linux

package gang

// ephemeralRange is the range of ports for outgoing connections: the
// IANA range macOS and the BSDs use.
func ephemeralRange() (int, int) { return 49152, 65535 }
