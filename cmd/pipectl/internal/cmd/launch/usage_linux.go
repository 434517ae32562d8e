package launch

import (
	"syscall"
	"time"
)

// usage is the CPU time (user and system) the launcher's process used so
// far and its peak resident memory, in bytes.
func usage() (cpu time.Duration, maxRSS int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, ru.Maxrss * 1024, true // Linux: kilobytes
}
