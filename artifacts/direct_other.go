//go:build !linux

package artifacts

import (
	"errors"
	"os"
)

// setDirect reports that direct I/O is not used on this system.
func setDirect(*os.File, bool) error { return errors.ErrUnsupported }

func isInvalid(error) bool { return false }
