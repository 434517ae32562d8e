package artifacts

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDirect turns direct I/O on or off for f.
func setDirect(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			flags |= unix.O_DIRECT
		} else {
			flags &^= unix.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, flags)
	}); err != nil {
		return err
	}
	return serr
}

func isInvalid(err error) bool { return errors.Is(err, syscall.EINVAL) }
