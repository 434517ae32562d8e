package gang

import (
	"fmt"
	"os"
)

// ephemeralRange is the kernel's range of ports for outgoing connections,
// from /proc/sys/net/ipv4/ip_local_port_range (Linux's default when it
// cannot be read).
func ephemeralRange() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768, 60999
	}
	return parsePortRange(string(b))
}

// parsePortRange parses "LOW\tHIGH\n", or gives Linux's default.
func parsePortRange(s string) (int, int) {
	var lo, hi int
	if n, err := fmt.Sscan(s, &lo, &hi); err != nil || n != 2 || lo < 1 || hi > 65535 || lo > hi {
		return 32768, 60999
	}
	return lo, hi
}
