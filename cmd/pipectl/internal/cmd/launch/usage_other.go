//go:build !linux

package launch

import "time"

// usage is not measured outside Linux.
func usage() (cpu time.Duration, maxRSS int64, ok bool) { return 0, 0, false }
