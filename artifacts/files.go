package artifacts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"pipectl.dev/pipectl/components/regular"
)

// FileSum returns the hex sha256 of the regular file at path, streaming
// it: a file of any size costs one buffer. A named pipe or a device is an
// error, never read. The read stops when ctx ends.
func FileSum(ctx context.Context, path string) (string, error) {
	f, _, err := regular.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tempPrefix starts the name of every temporary file and directory pipectl
// makes beside a file it writes (see isTemp). The names are short whatever
// the final name, so a file whose name is near the file system's limit
// (255 bytes) can still be written through one.
const tempPrefix = ".tmp-"

// tempRandBytes is the number of random bytes, hex-encoded, that follow
// tempPrefix in a temporary name.
const tempRandBytes = 8

func tempName(dir string) string {
	var b [tempRandBytes]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(dir, tempPrefix+hex.EncodeToString(b[:]))
}

// createTemp creates a new temporary file in dir with mode 0644 less the
// umask, as an ordinary new file gets.
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(tempName(dir), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

// mkdirTemp creates a new temporary directory in dir with mode 0755 less
// the umask, as mkdir makes it.
func mkdirTemp(dir string) (string, error) {
	for range 100 {
		p := tempName(dir)
		err := os.Mkdir(p, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return p, err
	}
	return "", fmt.Errorf("cannot create a temporary directory in %s", dir)
}

// ExistsError reports a destination that exists and was not to be replaced.
type ExistsError struct {
	Path string
}

func (e *ExistsError) Error() string { return e.Path + " exists" }

func (e *ExistsError) Is(target error) bool { return target == fs.ErrExist }

// renameNoReplace renames old to new unless new exists, in which case it
// fails with an *ExistsError and leaves both alone.
func renameNoReplace(old, new string) error {
	err := renameExclusive(old, new)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY):
		return &ExistsError{Path: new}
	default:
		if _, ok := err.(*os.LinkError); ok {
			return err
		}
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
}

// renameFallback is renameNoReplace where the system has no exclusive
// rename: a file is linked to its new name (which fails if the name
// exists) and then unlinked; a directory, or a file where hard links are
// not supported, is renamed after a check.
func renameFallback(old, new string) error {
	st, err := os.Lstat(old)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		err := os.Link(old, new)
		if err == nil {
			return os.Remove(old)
		}
		if errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if _, err := os.Lstat(new); err == nil {
		return fs.ErrExist
	}
	return os.Rename(old, new)
}

// CopyToFile downloads the object key of size bytes to the file dest,
// verifying its sha256 against want; dest appears only once verified. An
// existing dest is an *ExistsError unless opts.Force.
func CopyToFile(ctx context.Context, s Store, key, dest string, size int64, want string, opts FetchOptions) error {
	if st, err := os.Lstat(dest); err == nil {
		if !opts.Force {
			return &ExistsError{Path: dest}
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is %s: a file cannot replace it", dest, regular.Describe(st.Mode()))
		}
	}
	return fetchFile(ctx, s, key, dest, size, want, nopTracker{}, opts.Force)
}
