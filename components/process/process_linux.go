package process

import "syscall"

// sysProcAttr puts the process in its own process group and has the kernel
// kill it if this process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
