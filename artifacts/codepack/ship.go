package codepack

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/artifacts"
)

// Ship packs dir and stores the pack at Key(digest) unless the store has
// it already; it returns the pack and whether it was uploaded.
func Ship(ctx context.Context, s artifacts.Store, dir string, lim Options) (Pack, bool, error) {
	tmp, err := os.CreateTemp("", "pipectl-code-*.tar")
	if err != nil {
		return Pack{}, false, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	p, err := Write(ctx, dir, tmp, lim)
	if err != nil {
		return Pack{}, false, err
	}
	key := Key(p.Digest)
	if info, err := s.Stat(ctx, key); err == nil && info.Size == p.Size {
		return p, false, nil
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return Pack{}, false, err
	}
	if err := s.Put(ctx, key, tmp, p.Size); err != nil {
		return Pack{}, false, fmt.Errorf("store the code of %s at %s: %w", dir, s.URI(key), err)
	}
	return p, true, nil
}

// Fetch unpacks the pack with digest d from the store into the new folder
// dest: into a temporary folder beside it, checked against d, then renamed
// into place, so dest is whole or absent. Entries must stay inside dest
// (no absolute or .. names, links as Write keeps them) and within lim.
func Fetch(ctx context.Context, s artifacts.Store, d, dest string, lim Options) error {
	if err := CheckDigest(d); err != nil {
		return err
	}
	key := Key(d)
	rc, err := s.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("code package %s: %w", s.URI(key), err)
	}
	defer rc.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-")
	if err != nil {
		return err
	}
	h := sha256.New()
	r := io.TeeReader(rc, h)
	err = unpack(ctx, r, tmp, lim)
	if err == nil {
		_, err = io.Copy(io.Discard, r) // the archive's padding counts too
	}
	if err == nil && digestOf(h) != d {
		err = fmt.Errorf("its sha256 is %s: the object was changed after it was stored", digestOf(h))
	}
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("code package %s: %w", s.URI(key), err)
	}
	return nil
}

// unpack writes the archive's entries below dir. Links are made last, so
// no entry is written through one.
func unpack(ctx context.Context, r io.Reader, dir string, lim Options) error {
	tr := tar.NewReader(r)
	type link struct{ name, target string }
	var links []link
	linked := map[string]bool{}
	var files int
	var bytes int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if !validName(name) {
			return fmt.Errorf("entry %q: want a relative path without . or .. segments", hdr.Name)
		}
		for p := path.Dir(name); p != "."; p = path.Dir(p) {
			if linked[p] {
				return fmt.Errorf("entry %q is below the link %q", hdr.Name, p)
			}
		}
		if files++; lim.MaxFiles > 0 && files > lim.MaxFiles {
			return fmt.Errorf("more than %d entries", lim.MaxFiles)
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(full, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if bytes += hdr.Size; lim.MaxBytes > 0 && bytes > lim.MaxBytes {
				return fmt.Errorf("more than %d MiB", lim.MaxBytes>>20)
			}
			if err := writeFile(tr, full, hdr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if !inside(name, hdr.Linkname) {
				return fmt.Errorf("entry %q: a link to %q, outside the folder", hdr.Name, hdr.Linkname)
			}
			links = append(links, link{full, filepath.FromSlash(hdr.Linkname)})
			linked[name] = true
		default:
			return fmt.Errorf("entry %q: type %q is not a file, folder or link", hdr.Name, hdr.Typeflag)
		}
	}
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(l.name), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(l.target, l.name); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(r io.Reader, full string, hdr *tar.Header) error {
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, r, hdr.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// validName reports whether name is a clean relative slash path.
func validName(name string) bool {
	if name == "" || path.IsAbs(name) || path.Clean(name) != name {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
