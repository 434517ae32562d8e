package artifacts

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// renameExclusive renames old to new, failing when new exists, with
// renameat2(RENAME_NOREPLACE); on file systems without it, renameFallback.
func renameExclusive(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
		return renameFallback(old, new)
	}
	return err
}
