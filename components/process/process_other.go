//go:build !linux

package process

import "syscall"

// sysProcAttr puts the process in its own process group. (Only Linux can
// have the kernel kill it when this process dies; elsewhere a run's Guard
// does.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
