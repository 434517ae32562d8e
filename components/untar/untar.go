package untar

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Limits bound an archive. A zero field takes Defaults'.
type Limits struct {
	// MaxEntries bounds the entries (files, folders, links); MaxBytes the
	// total size of the files.
	MaxEntries int
	MaxBytes   int64
	// MaxName bounds a name's length in bytes, MaxDepth its segments.
	MaxName  int
	MaxDepth int
	// MaxTrailer bounds what may follow the end of the archive.
	MaxTrailer int64
	// Rooted accepts names starting with "./" or "/" (an image's layers
	// name their files so), read as from the folder.
	Rooted bool
}

// Defaults are the bounds of a field left zero.
var Defaults = Limits{MaxEntries: 100000, MaxBytes: 1 << 30, MaxName: 4096, MaxDepth: 128, MaxTrailer: 10240}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = Defaults.MaxEntries
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = Defaults.MaxBytes
	}
	if l.MaxName <= 0 {
		l.MaxName = Defaults.MaxName
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = Defaults.MaxDepth
	}
	if l.MaxTrailer <= 0 {
		l.MaxTrailer = Defaults.MaxTrailer
	}
	return l
}

// Reader reads an untrusted archive entry by entry, within its Limits.
type Reader struct {
	ctx     context.Context
	r       io.Reader
	tr      *tar.Reader
	lim     Limits
	entries int
	bytes   int64
}

// NewReader reads the archive r under ctx and lim.
func NewReader(ctx context.Context, r io.Reader, lim Limits) *Reader {
	return &Reader{ctx: ctx, r: r, tr: tar.NewReader(r), lim: lim.withDefaults()}
}

// Next is the next entry's header and its name made clean (see the
// package doc); io.EOF at the end of the archive. Every bound is checked
// before the entry's bytes are read.
func (r *Reader) Next() (*tar.Header, string, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, "", err
	}
	hdr, err := r.tr.Next()
	if err != nil {
		return nil, "", err
	}
	if r.entries++; r.entries > r.lim.MaxEntries {
		return nil, "", fmt.Errorf("more than %d entries", r.lim.MaxEntries)
	}
	name, err := CleanName(hdr.Name, r.lim)
	if err != nil {
		return nil, "", err
	}
	if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA {
		if hdr.Size < 0 || hdr.Size > r.lim.MaxBytes-r.bytes {
			return nil, "", fmt.Errorf("entry %q: more than %d MiB of files", short(hdr.Name), r.lim.MaxBytes>>20)
		}
		r.bytes += hdr.Size
	}
	return hdr, name, nil
}

// Read reads the current entry's bytes, checking the context on each call.
func (r *Reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.tr.Read(p)
}

// Trailer reads what follows the end of the archive (after Next returned
// io.EOF), at most Limits.MaxTrailer bytes: more is an error.
func (r *Reader) Trailer() error {
	n, err := io.Copy(io.Discard, io.LimitReader(r.r, r.lim.MaxTrailer+1))
	if err != nil {
		return err
	}
	if n > r.lim.MaxTrailer {
		return fmt.Errorf("more than %d bytes after the end of the archive", r.lim.MaxTrailer)
	}
	return nil
}

// CleanName is an entry's name without its trailing "/" (and, when
// lim.Rooted, its leading "./" or "/"), checked against lim (MaxName, MaxDepth; zero: Defaults')
// and refused unless it is a clean relative path; "." for the root.
func CleanName(name string, lim Limits) (string, error) {
	lim = lim.withDefaults()
	if len(name) > lim.MaxName {
		return "", fmt.Errorf("entry %q: a name over %d bytes", short(name), lim.MaxName)
	}
	if d := strings.Count(name, "/"); d > lim.MaxDepth+2 {
		return "", fmt.Errorf("entry %q: a name over %d folders deep", short(name), lim.MaxDepth)
	}
	n := strings.TrimSuffix(name, "/")
	if lim.Rooted {
		n = strings.TrimLeft(strings.TrimPrefix(n, "./"), "/")
	}
	if n == "" || n == "." {
		return ".", nil
	}
	if strings.Count(n, "/") >= lim.MaxDepth {
		return "", fmt.Errorf("entry %q: a name over %d folders deep", short(name), lim.MaxDepth)
	}
	if path.IsAbs(n) || path.Clean(n) != n || strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("entry %q: want a relative path without . or .. segments", short(name))
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("entry %q: want a relative path without . or .. segments", short(name))
		}
	}
	return n, nil
}

// short is name for a message: its first 200 bytes.
func short(name string) string {
	if len(name) > 200 {
		return name[:200] + "…"
	}
	return name
}

// ErrOutside is the error of a link that lands outside the folder.
var ErrOutside = errors.New("it lands outside the folder")

// maxHops bounds the links followed resolving one path (Linux's 40).
const maxHops = 40

// Lookup tells Resolve whether the path name (slash-separated, clean,
// relative to the folder) is a link and its target.
type Lookup func(name string) (target string, link bool, err error)

// Resolve is the path, relative to the folder, that name designates when
// every link on the way (lookup) is followed as the file system would, one
// component at a time: ErrOutside when a ".." or an absolute target
// leaves the folder, an error after maxHops links. The path need not
// exist.
func Resolve(name string, lookup Lookup) (string, error) {
	var done []string
	todo := strings.Split(name, "/")
	hops, work := 0, 0
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		if work++; work > 1<<16 {
			return "", fmt.Errorf("%q: too long to resolve", short(name))
		}
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", ErrOutside
			}
			done = done[:len(done)-1]
			continue
		}
		cand := strings.Join(append(done, seg), "/")
		target, link, err := lookup(cand)
		if err != nil {
			return "", err
		}
		if !link {
			done = append(done, seg)
			continue
		}
		if hops++; hops > maxHops {
			return "", fmt.Errorf("%q: more than %d links on the way", short(name), maxHops)
		}
		if target == "" || path.IsAbs(target) || strings.HasPrefix(target, `\`) || strings.Contains(target, ":") && len(target) > 1 && target[1] == ':' {
			return "", ErrOutside
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return strings.Join(done, "/"), nil
}
