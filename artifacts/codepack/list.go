package codepack

import (
	"archive/tar"
	"context"
	"io"
	"strings"
)

// Listing is what a pack of a folder holds and leaves out (List).
type Listing struct {
	Pack
	// Entries are the pack's entries in its order.
	Entries []Entry `json:"entries"`
	// LeftOut are the files and folders the pack leaves out, each with why.
	LeftOut []LeftOut `json:"leftOut"`
}

// Entry is one entry of a pack.
type Entry struct {
	// Path is slash-separated, from the folder; Type file, folder or link.
	Path string `json:"path"`
	Type string `json:"type"`
	// Size is a file's; Mode its permission bits as packed; Link a link's target.
	Size int64  `json:"size"`
	Mode string `json:"mode"`
	Link string `json:"link,omitempty"`
}

// LeftOut is a file or folder a pack leaves out.
type LeftOut struct {
	// Path is slash-separated, from the folder (a folder ends in /).
	Path string `json:"path"`
	// Reason is why: credentials, IgnoreFile, version control or a cache.
	Reason string `json:"reason"`
}

// List is what Write would pack of dir, without keeping the pack: its
// digest, every entry and what is left out; Write's errors (a file that
// looks like a credential, a link that leaves the folder) are List's.
func List(ctx context.Context, dir string, lim Options) (*Listing, error) {
	l := &Listing{Entries: []Entry{}, LeftOut: []LeftOut{}}
	p, err := write(ctx, dir, io.Discard, lim, l)
	if err != nil {
		return nil, err
	}
	l.Pack = p
	return l, nil
}

func (l *Listing) packed(hdr *tar.Header) {
	if l == nil {
		return
	}
	e := Entry{Path: strings.TrimSuffix(hdr.Name, "/"), Size: hdr.Size}
	switch hdr.Typeflag {
	case tar.TypeDir:
		e.Type, e.Mode = "folder", "755"
	case tar.TypeSymlink:
		e.Type, e.Link = "link", hdr.Linkname
	default:
		e.Type, e.Mode = "file", "644"
		if hdr.Mode&0o111 != 0 {
			e.Mode = "755"
		}
	}
	l.Entries = append(l.Entries, e)
}

func (l *Listing) leftOut(name string, dir bool, why string) {
	if l == nil {
		return
	}
	if dir {
		name += "/"
	}
	l.LeftOut = append(l.LeftOut, LeftOut{Path: name, Reason: why})
}
