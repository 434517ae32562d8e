package untar

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Options say what Extract keeps of an archive.
type Options struct {
	// Links keeps symbolic links (each resolved inside the folder); without
	// it a link is an error.
	Links bool
	// Select, when set, is the name below the folder of the entry hdr
	// whose clean name is name; false skips the entry. "." is the folder.
	Select func(hdr *tar.Header, name string) (string, bool)
}

// Extract writes the archive's entries below the existing folder dest
// (see the package doc): folders and files as they come, links last.
func (r *Reader) Extract(dest string, opts Options) error {
	links := map[string]string{}
	var names []string
	for {
		hdr, name, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if opts.Select != nil {
			var ok bool
			if name, ok = opts.Select(hdr, name); !ok {
				continue
			}
		}
		if name == "." {
			if hdr.Typeflag != tar.TypeDir {
				return fmt.Errorf("entry %q: the folder itself, as a %q", short(hdr.Name), hdr.Typeflag)
			}
			continue
		}
		names = append(names, name)
		full := filepath.Join(dest, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(full, 0o755)
		case tar.TypeReg, tar.TypeRegA:
			err = r.writeFile(full, hdr)
		case tar.TypeSymlink:
			if !opts.Links {
				return fmt.Errorf("entry %q is a link: only files and folders are read here", short(hdr.Name))
			}
			if _, dup := links[name]; dup {
				return fmt.Errorf("entry %q: twice", short(hdr.Name))
			}
			links[name] = hdr.Linkname
		default:
			return fmt.Errorf("entry %q: type %q is not a file, folder or link", short(hdr.Name), hdr.Typeflag)
		}
		if err != nil {
			return err
		}
	}
	return makeLinks(dest, names, links)
}

func (r *Reader) writeFile(full string, hdr *tar.Header) error {
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

// makeLinks checks that no entry is below a link and every link resolves
// inside the folder, then makes them.
func makeLinks(dest string, names []string, links map[string]string) error {
	if len(links) == 0 {
		return nil
	}
	sort.Strings(names)
	for l := range links {
		// Entries below l sort right after l+"/".
		i := sort.SearchStrings(names, l+"/")
		if i < len(names) && strings.HasPrefix(names[i], l+"/") {
			return fmt.Errorf("entry %q is below the link %q", short(names[i]), short(l))
		}
	}
	lookup := func(name string) (string, bool, error) {
		t, ok := links[name]
		return t, ok, nil
	}
	order := make([]string, 0, len(links))
	for l, target := range links {
		if err := CheckLink(l, target, lookup); err != nil {
			return err
		}
		order = append(order, l)
	}
	sort.Strings(order)
	for _, l := range order {
		full := filepath.Join(dest, filepath.FromSlash(l))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(filepath.FromSlash(links[l]), full); err != nil {
			return err
		}
	}
	return nil
}

// CheckLink refuses the link at name (clean, relative to the folder) with
// target unless it resolves inside the folder, every link on the way
// followed (Resolve).
func CheckLink(name, target string, lookup Lookup) error {
	if target == "" {
		return fmt.Errorf("link %q: no target", short(name))
	}
	var err error
	if path.IsAbs(target) || strings.HasPrefix(target, `\`) {
		err = ErrOutside
	} else {
		_, err = Resolve(path.Dir(name)+"/"+target, lookup)
	}
	if errors.Is(err, ErrOutside) {
		return fmt.Errorf("link %q to %q: %w", short(name), short(target), err)
	}
	if err != nil {
		return fmt.Errorf("link %q: %w", short(name), err)
	}
	return nil
}
