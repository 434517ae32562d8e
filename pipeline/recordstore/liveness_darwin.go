package recordstore

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// processStart returns the start time of process pid, and whether it runs
// (a zombie does not).
func processStart(pid int) (string, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid || kp.Proc.P_stat == 5 /* SZOMB */ {
		return "", false
	}
	t := kp.Proc.P_starttime
	return fmt.Sprintf("%d.%06d", t.Sec, t.Usec), true
}
