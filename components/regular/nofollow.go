package regular

import (
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow is Open for a file that must not be a link: the last
// element of path is not followed (a link to /dev/zero or to a file
// outside the folder is refused, named, and never opened).
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	return open(path, syscall.O_NOFOLLOW)
}

// ReadNoFollow is Read through OpenNoFollow.
func ReadNoFollow(path string, limit int64) ([]byte, error) {
	return read(path, limit, OpenNoFollow)
}
