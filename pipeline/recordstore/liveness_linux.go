package recordstore

import (
	"fmt"
	"os"
	"strings"
)

// processStart returns the boot id and start time of process pid, and
// whether it runs (a zombie does not).
func processStart(pid int) (string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	s := string(b)
	// The fields after the command, which is in parentheses: state is
	// field 3, starttime field 22.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return "", false
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(boot)) + "/" + f[19], true
}
