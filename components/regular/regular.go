// Package regular reads only regular files: it never blocks on a named
// pipe or reads a device, and names what a path is instead. Every file
// pipectl reads because a user or a pipeline named it goes through it (the
// YAML loaders, the artifact store, the runtime's output files); it is a
// leaf, so a loader links no store.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens the regular file at path for reading. It never blocks
// on a named pipe (the file is opened non-blocking and checked before any
// read) and fails with a message naming what path is instead: a named
// pipe, a device, a socket or a directory.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return open(path, 0)
}

// open is Open with extra open flags (O_NOFOLLOW).
func open(path string, flags int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		if flags&syscall.O_NOFOLLOW != 0 && errors.Is(err, syscall.ELOOP) {
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

// Read reads the regular file at path (see Open), failing
// when it holds more than limit bytes. Errors are *fs.PathError.
func Read(path string, limit int64) ([]byte, error) {
	return read(path, limit, Open)
}

// read reads the file open opens at path, at most limit bytes.
func read(path string, limit int64, open func(string) (*os.File, fs.FileInfo, error)) ([]byte, error) {
	f, _, err := open(path)
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

// Describe names a kind of file for messages: "a named pipe (FIFO)".
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	default:
		return "a special file"
	}
}
