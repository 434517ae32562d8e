package local

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// processRunning reports whether pid still runs shortly after it was
// stopped (a zombie waiting for its reaper does not count).
func processRunning(pid int) bool {
	for i := 0; i < 50; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(b)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) == 0 || f[0] == "Z" {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
