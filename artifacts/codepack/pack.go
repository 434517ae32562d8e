package codepack

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"pipectl.dev/pipectl/components/regular"
	"pipectl.dev/pipectl/components/untar"
)

// Options bound a pack (and what Fetch unpacks) and say what it leaves out.
type Options struct {
	// MaxBytes bounds the total size of the files; MaxFiles the number of
	// entries (files, folders and links).
	MaxBytes int64
	MaxFiles int
	// Exclude are paths a pack leaves out besides SkipNames: a local
	// artifact store's folder when it is inside the component's.
	Exclude []string
}

// Defaults are a code folder's: data belongs in a step's inputs.
var Defaults = Options{MaxBytes: 256 << 20, MaxFiles: 20000}

// SkipNames are the files and folders a pack leaves out, wherever they are:
// version control, language caches, virtual environments and the local
// artifact store's default folder.
var SkipNames = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".pipectl": true,
	"__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".ipynb_checkpoints": true,
	".venv": true, ".DS_Store": true,
}

// Prefix is the algorithm part of a digest.
const Prefix = "sha256:"

// Key is the store key of the pack with digest d ("sha256:<hex>").
func Key(d string) string { return ".code/" + strings.TrimPrefix(d, Prefix) + ".tar" }

// CheckDigest reports whether d is a pack digest: sha256: and 64 lowercase hex digits.
func CheckDigest(d string) error {
	h, ok := strings.CutPrefix(d, Prefix)
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return fmt.Errorf("code digest %q: want sha256: and 64 lowercase hex digits", d)
	}
	return nil
}

// Pack is what Write wrote.
type Pack struct {
	// Digest is "sha256:<hex>" of the archive.
	Digest string `json:"digest"`
	// Size is the archive's size; Files the entries in it.
	Size  int64 `json:"size"`
	Files int   `json:"files"`
}

// Write packs the folder dir into w (see the package doc).
func Write(ctx context.Context, dir string, w io.Writer, lim Options) (Pack, error) {
	return write(ctx, dir, w, lim, nil)
}

// write is Write, telling l (when set) each entry packed and left out.
func write(ctx context.Context, dir string, w io.Writer, lim Options, l *Listing) (Pack, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return Pack{}, fmt.Errorf("code folder: %w", err)
	}
	if !info.IsDir() {
		return Pack{}, fmt.Errorf("code folder %s: not a folder", dir)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	p := &packer{ctx: ctx, root: dir, tw: tar.NewWriter(cw), lim: lim, exclude: map[string]bool{}, list: l}
	for _, x := range lim.Exclude {
		if abs, err := filepath.Abs(x); err == nil {
			p.exclude[abs] = true
		}
	}
	if p.absRoot, err = filepath.Abs(dir); err != nil {
		return Pack{}, err
	}
	for _, pat := range Credentials {
		p.rules = append(p.rules, rule{pat: pat, credential: true})
	}
	user, err := readIgnore(dir)
	if err != nil {
		return Pack{}, err
	}
	p.rules = append(p.rules, user...)
	if err := p.folder(""); err != nil {
		return Pack{}, err
	}
	if err := p.tw.Close(); err != nil {
		return Pack{}, err
	}
	return Pack{Digest: digestOf(h), Size: cw.n, Files: p.files}, nil
}

// Digest is the digest of the pack of dir, without keeping the pack.
func Digest(ctx context.Context, dir string, lim Options) (string, error) {
	p, err := Write(ctx, dir, io.Discard, lim)
	return p.Digest, err
}

func digestOf(h hash.Hash) string { return Prefix + hex.EncodeToString(h.Sum(nil)) }

type packer struct {
	ctx  context.Context
	root string
	tw   *tar.Writer
	lim  Options
	// exclude holds Options.Exclude made absolute, absRoot the folder's.
	exclude map[string]bool
	absRoot string
	// rules are Credentials' then the folder's IgnoreFile's, in order.
	rules []rule
	files int
	bytes int64
	// list, when set, is told each entry packed and left out.
	list *Listing
}

// folder packs the entries of the folder rel ("" for the root), sorted.
func (p *packer) folder(rel string) error {
	entries, err := os.ReadDir(filepath.Join(p.root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("code folder %s: %w", p.root, err)
	}
	for _, e := range entries { // sorted by name: byte order
		name := path.Join(rel, e.Name())
		why := ""
		switch r, ok := p.match(name); {
		case SkipNames[e.Name()]:
			why = "version control or a cache"
		case ok && !r.allow && r.credential:
			why = "credentials (left out by default)"
		case ok && !r.allow:
			why = IgnoreFile
		case len(p.exclude) > 0 && p.exclude[filepath.Join(p.absRoot, filepath.FromSlash(rel), e.Name())]:
			why = "the run's own folder"
		}
		if why != "" {
			p.list.leftOut(name, e.IsDir(), why)
			continue
		}
		if err := p.ctx.Err(); err != nil {
			return err
		}
		if err := p.entry(path.Join(rel, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// refuse names a file of the folder in an error.
func (p *packer) refuse(rel, format string, args ...any) error {
	return fmt.Errorf("code folder %s: %s: %s", p.root, filepath.Join(p.root, filepath.FromSlash(rel)), fmt.Sprintf(format, args...))
}

func (p *packer) entry(rel string) error {
	full := filepath.Join(p.root, filepath.FromSlash(rel))
	info, err := os.Lstat(full)
	if err != nil {
		return fmt.Errorf("code folder %s: %w", p.root, err)
	}
	if p.files++; p.lim.MaxFiles > 0 && p.files > p.lim.MaxFiles {
		return p.refuse(rel, "the folder holds more than %d files and folders (a component's folder is shipped with every cluster run; keep data out of it and pass it as an input)", p.lim.MaxFiles)
	}
	hdr := &tar.Header{Name: rel, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	switch mode := info.Mode(); {
	case mode.IsDir():
		hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
		if err := p.tw.WriteHeader(hdr); err != nil {
			return err
		}
		p.list.packed(hdr)
		return p.folder(rel)
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return fmt.Errorf("code folder %s: %w", p.root, err)
		}
		if err := p.inside(rel, target); err != nil {
			return p.refuse(rel, "a link to %s, outside the folder once every link on the way is followed (only links that stay inside a component's folder are shipped): %v", target, err)
		}
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, filepath.ToSlash(target), 0o777
		p.list.packed(hdr)
		return p.tw.WriteHeader(hdr)
	case mode.IsRegular():
		if p.bytes += info.Size(); p.lim.MaxBytes > 0 && p.bytes > p.lim.MaxBytes {
			return p.refuse(rel, "the folder holds more than %d MiB (a component's folder is shipped with every cluster run; keep data out of it and pass it as an input)", p.lim.MaxBytes>>20)
		}
		hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeReg, info.Size(), 0o644
		if mode&0o111 != 0 {
			hdr.Mode = 0o755
		}
		return p.file(rel, full, hdr)
	default:
		return p.refuse(rel, "a special file (%s); only files, folders and links are shipped", mode.Type())
	}
}

func (p *packer) file(rel, full string, hdr *tar.Header) error {
	// Not through a link nor blocking: the file may have changed since
	// it was listed.
	f, _, err := regular.OpenNoFollow(full)
	if err != nil {
		return fmt.Errorf("code folder %s: %w", p.root, err)
	}
	defer f.Close()
	// The start of the file tells whether it holds a credential: it is
	// read before anything of it is written.
	head := make([]byte, min(hdr.Size, sniffBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return p.refuse(rel, "%v", err)
	}
	if what := looksLikeCredential(head); what != "" {
		if r, ok := p.match(rel); !ok || !r.allow {
			return p.refuse(rel, "it looks like a credential (%s), and a credential is never shipped by accident: "+
				"move it out of the folder, name it in %s to leave it out, or add the line \"!%s\" to %s to ship it anyway",
				what, IgnoreFile, rel, filepath.Join(p.root, IgnoreFile))
		}
	}
	if err := p.tw.WriteHeader(hdr); err != nil {
		return err
	}
	p.list.packed(hdr)
	n, err := io.Copy(p.tw, io.MultiReader(bytes.NewReader(head), io.LimitReader(f, hdr.Size-int64(len(head)))))
	if err == nil && n < hdr.Size {
		err = errors.New("the file shrank while it was packed")
	}
	if err != nil {
		return p.refuse(rel, "%v", err)
	}
	return nil
}

// inside reports whether the link at rel (slash-separated, relative to
// the folder) with target stays inside the folder when it is followed as
// the file system would, through every link on the way (untar.CheckLink).
func (p *packer) inside(rel, target string) error {
	t := filepath.ToSlash(target)
	if filepath.IsAbs(target) || filepath.VolumeName(target) != "" {
		return untar.ErrOutside
	}
	return untar.CheckLink(rel, t, func(name string) (string, bool, error) {
		full := filepath.Join(p.root, filepath.FromSlash(name))
		info, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) || err == nil && info.Mode()&fs.ModeSymlink == 0 {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		l, err := os.Readlink(full)
		return filepath.ToSlash(l), true, err
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// IgnoreFile, in a component's folder, lists what its pack leaves out: one
// pattern a line (path.Match syntax; # starts a comment). A pattern with a
// slash matches a path from the folder, one without matches a name at any
// depth; a match on a folder leaves out all of it. A line "!PATTERN" ships
// what matches after all: what an earlier line (or Credentials, which come
// first) leaves out, and a file that looks like a credential. The last
// line that matches decides.
const IgnoreFile = ".pipectlignore"

// maxIgnoreBytes bounds IgnoreFile.
const maxIgnoreBytes = 1 << 20

// rule is a line of IgnoreFile, or one of Credentials.
type rule struct {
	pat string
	// allow is a "!" line's; credential one of Credentials.
	allow, credential bool
}

func readIgnore(dir string) ([]rule, error) {
	name := filepath.Join(dir, IgnoreFile)
	// Opened without following a link or blocking on a FIFO, and read
	// within a bound: a FIFO blocked the run, a link to /dev/zero filled
	// the memory.
	b, err := regular.ReadNoFollow(name, maxIgnoreBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w (want a file of at most %d KiB, not a link, folder or special file)", err, maxIgnoreBytes>>10)
	}
	var pats []rule
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := rule{}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			r.allow, line = true, strings.TrimSpace(rest)
		}
		r.pat = strings.Trim(line, "/")
		if _, err := path.Match(r.pat, ""); err != nil || r.pat == "" {
			return nil, fmt.Errorf("%s:%d: %q is not a pattern (want path.Match syntax, e.g. *.csv or data/raw)", name, i+1, line)
		}
		pats = append(pats, r)
	}
	return pats, nil
}

// match is the last rule matching the entry rel, if any.
func (p *packer) match(rel string) (rule, bool) {
	for i := len(p.rules) - 1; i >= 0; i-- {
		r := p.rules[i]
		name := rel
		if !strings.Contains(r.pat, "/") {
			name = path.Base(rel)
		}
		if ok, _ := path.Match(r.pat, name); ok {
			return r, true
		}
	}
	return rule{}, false
}
