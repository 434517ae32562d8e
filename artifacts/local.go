package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"pipectl.dev/pipectl/components/regular"
)

// Local is a Store kept in a directory of the local file system.
type Local struct {
	dir string
}

// NewLocal returns a store rooted at dir. A missing directory is an empty
// store, created by the first write: opening a store to read from it (runs
// ls in a folder without runs) creates nothing.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("artifact store %s: not a directory", abs)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Local{dir: abs}, nil
}

// Dir returns the store's directory.
func (l *Local) Dir() string { return l.dir }

// Root implements Store.
func (l *Local) Root() string { return (&url.URL{Scheme: "file", Path: l.dir}).String() }

// URI implements Store.
func (l *Local) URI(key string) string {
	return (&url.URL{Scheme: "file", Path: path.Join(filepath.ToSlash(l.dir), key)}).String()
}

func (l *Local) path(key string) (string, error) {
	clean := path.Clean("/" + key)
	if key == "" || clean == "/" || strings.Contains(key, "\\") || clean[1:] != strings.TrimSuffix(key, "/") {
		return "", fmt.Errorf("invalid object key %q", key)
	}
	return filepath.Join(l.dir, filepath.FromSlash(clean[1:])), nil
}

// Put implements Store: it writes to a temporary file beside the object and
// renames it into place, so readers never see a partial object.
func (l *Local) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	return l.write(ctx, key, r, size, true)
}

// Create implements Store: Put, with an exclusive rename into place.
func (l *Local) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	err := l.write(ctx, key, r, size, false)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", l.URI(key), fs.ErrExist)
	}
	return err
}

func (l *Local) write(ctx context.Context, key string, r io.Reader, size int64, replace bool) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := createTemp(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, ctxReader{ctx, r})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", l.URI(key), err)
	}
	if size >= 0 && n != size {
		return fmt.Errorf("write %s: got %d bytes, want %d", l.URI(key), n, size)
	}
	if !replace {
		return renameNoReplace(tmp.Name(), p)
	}
	return os.Rename(tmp.Name(), p)
}

// Get implements Store. It opens only a regular file: a symbolic link
// anywhere below the store's directory, a named pipe or a device fails
// with ErrNotRegular, so a link planted in the store never serves a file
// from outside it and a FIFO never blocks the reader.
func (l *Local) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	if err := l.noLinks(key, p); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", l.URI(key), ErrNotFound)
		}
		if st, lerr := os.Lstat(p); lerr == nil && !st.Mode().IsRegular() && !st.IsDir() {
			return nil, &NotRegularError{URI: l.URI(key), Mode: st.Mode()}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", l.URI(key), ErrNotFound)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{URI: l.URI(key), Mode: st.Mode()}
	}
	return f, nil
}

// Stat implements Store. Like Get, it describes only a regular file.
func (l *Local) Stat(_ context.Context, key string) (ObjectInfo, error) {
	p, err := l.path(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := l.noLinks(key, p); err != nil {
		return ObjectInfo{}, err
	}
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && st.IsDir()) {
		return ObjectInfo{}, fmt.Errorf("%s: %w", l.URI(key), ErrNotFound)
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	if !st.Mode().IsRegular() {
		return ObjectInfo{}, &NotRegularError{URI: l.URI(key), Mode: st.Mode()}
	}
	return ObjectInfo{Key: key, Size: st.Size(), Modified: st.ModTime()}, nil
}

// noLinks fails with a NotRegularError when a directory on the way from
// the store's directory to p (the path of key) is a symbolic link. The
// store's own directory may be reached through links: it is what the user
// named.
func (l *Local) noLinks(key, p string) error {
	rel, err := filepath.Rel(l.dir, filepath.Dir(p))
	if err != nil || rel == "." {
		return nil
	}
	dir := l.dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		st, err := os.Lstat(dir)
		if err != nil {
			return nil // the open that follows says what is missing
		}
		if !st.IsDir() {
			return &NotRegularError{URI: l.URI(key), Mode: st.Mode(), Parent: true}
		}
	}
	return nil
}

// NotRegularError reports an object of a local store that is not a regular
// file: a symbolic link (Get never follows one, it could lead anywhere), a
// named pipe, a device, a socket. Parent is set when a directory on the
// way to it is the link.
type NotRegularError struct {
	URI    string
	Mode   fs.FileMode
	Parent bool
}

func (e *NotRegularError) Error() string {
	if e.Parent {
		return fmt.Sprintf("%s: a directory on its path is %s: the store reads only regular files in its own directories", e.URI, regular.Describe(e.Mode))
	}
	return fmt.Sprintf("%s is %s: the store reads only regular files in its own directories", e.URI, regular.Describe(e.Mode))
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// List implements Store.
func (l *Local) List(_ context.Context, prefix string, recursive bool) ([]ObjectInfo, error) {
	// Walk the deepest directory that contains every key with this prefix.
	base := prefix[:strings.LastIndex(prefix, "/")+1]
	start := l.dir
	if base != "" {
		p, err := l.path(base)
		if err != nil {
			return nil, err
		}
		start = p
	}
	var out []ObjectInfo
	if !recursive {
		entries, err := os.ReadDir(start)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			key := base + e.Name()
			if !strings.HasPrefix(key, prefix) || isTemp(e.Name()) {
				continue
			}
			if e.IsDir() {
				out = append(out, ObjectInfo{Key: key + "/", Dir: true})
				continue
			}
			if !e.Type().IsRegular() {
				continue // a link, a FIFO: not an object (see Get)
			}
			if info, err := e.Info(); err == nil {
				out = append(out, ObjectInfo{Key: key, Size: info.Size(), Modified: info.ModTime()})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		return out, nil
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(l.dir, p)
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if p != start && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) || isTemp(d.Name()) || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		out = append(out, ObjectInfo{Key: key, Size: info.Size(), Modified: info.ModTime()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// Delete implements Store.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// isTemp reports whether name is one of the temporary files pipectl's
// writers make (see tempName): ".tmp-" and 16 lower-case hex digits,
// exactly. A user's file such as ".draft.tmp-2024" or ".weights.tmp-part1"
// is not one: it is listed, and gc never removes it.
func isTemp(name string) bool {
	hex, ok := strings.CutPrefix(name, tempPrefix)
	if !ok || len(hex) != 2*tempRandBytes {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ctxReader stops a copy when its context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// LocalDir is the folder of a store whose root is file:///PATH (a Local
// store, or one wrapping it), and false for any other store.
func LocalDir(s Store) (string, bool) {
	u, err := url.Parse(s.Root())
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}
