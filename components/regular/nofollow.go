package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow is Open for a file that must not be a link: the last
// element of path is not followed (a link to /dev/zero or to a file
// outside the folder is refused, named, and never opened).
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("a symbolic link, not a regular file")}
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%s, not a regular file", Describe(st.Mode()))}
	}
	return f, st, nil
}

// ReadNoFollow is Read through OpenNoFollow.
func ReadNoFollow(path string, limit int64) ([]byte, error) {
	f, _, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than the %d bytes allowed", limit)}
	}
	return b, nil
}
