package ui

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/artifacts"
)

// inline says whether a download of media type t may show in the browser
// (?inline=1): images and plain text; everything else is an attachment.
func inline(t string) bool {
	return imageType(t) || t == "text/plain; charset=utf-8"
}

// download serves an output's bytes: a file output or a file of a directory
// output, with Range requests and its sha256 as ETag; a whole directory
// output as a tar stream. Whole files are checked against their sha256 as
// they stream: on a mismatch the connection is cut, so a corrupt file never
// arrives complete.
func (s *server) download(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	o, err := findOutput(ctx, s.Store, rec, r.PathValue("step"), r.PathValue("output"), r.PathValue("file"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hd := w.Header()
	// An artifact is data, never a page of this site.
	hd.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if o.Dir {
		hd.Set("Content-Type", "application/x-tar")
		hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": o.Name + ".tar"}))
		if r.Method == http.MethodHead {
			return
		}
		if err := s.writeTar(ctx, w, o); err != nil {
			s.Log.Error("download", "run", rec.ID, "output", o.Name, "err", err)
			panic(http.ErrAbortHandler)
		}
		return
	}
	ctype, err := s.contentType(ctx, o)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hd.Set("Content-Type", ctype)
	disp := "attachment"
	if r.URL.Query().Get("inline") == "1" && inline(ctype) {
		disp = "inline"
	}
	hd.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": path.Base(o.Name)}))
	if o.SHA256 != "" {
		hd.Set("ETag", `"`+o.SHA256+`"`)
	}
	if r.Header.Get("Range") != "" || r.Method == http.MethodHead || o.SHA256 == "" {
		http.ServeContent(w, r, "", o.Meta.Created, &storeFile{ctx: ctx, s: s.Store, key: o.Key, size: o.Size})
		return
	}
	hd.Set("Accept-Ranges", "bytes")
	if !o.Meta.Created.IsZero() {
		hd.Set("Last-Modified", o.Meta.Created.UTC().Format(http.TimeFormat))
	}
	if match := r.Header.Get("If-None-Match"); match != "" && match == hd.Get("ETag") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.FormatInt(o.Size, 10))
	if err := artifacts.Copy(ctx, s.Store, o.Key, w, o.SHA256); err != nil {
		s.Log.Error("download", "run", rec.ID, "output", o.Name, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// contentType is the media type of an object: from its name's extension,
// else sniffed from its first bytes.
func (s *server) contentType(ctx context.Context, o object) (string, error) {
	if t := mime.TypeByExtension(path.Ext(o.Name)); t != "" {
		if strings.HasPrefix(t, "text/plain") {
			return "text/plain; charset=utf-8", nil
		}
		return t, nil
	}
	r, err := artifacts.GetRange(ctx, s.Store, o.Key, 0, 512)
	if err != nil {
		return "", err
	}
	defer r.Close()
	head, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return http.DetectContentType(head), nil
}

func (s *server) writeTar(ctx context.Context, w io.Writer, o object) error {
	tw := tar.NewWriter(w)
	for _, f := range o.Meta.Files {
		hdr := &tar.Header{Name: o.Name + "/" + f.Path, Mode: 0o644, Size: f.Size, ModTime: o.Meta.Created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if err := artifacts.Copy(ctx, s.Store, o.Key+"/"+f.Path, tw, f.SHA256); err != nil {
			return err
		}
	}
	return tw.Close()
}

// storeFile is an io.ReadSeeker over a stored object for http.ServeContent:
// a seek only moves the offset; the next read opens the object there.
type storeFile struct {
	ctx  context.Context
	s    artifacts.Store
	key  string
	size int64
	off  int64
	r    io.ReadCloser
}

func (f *storeFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.size
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	if offset != f.off && f.r != nil {
		f.r.Close()
		f.r = nil
	}
	f.off = offset
	return offset, nil
}

func (f *storeFile) Read(p []byte) (int, error) {
	if f.r == nil {
		r, err := artifacts.GetRange(f.ctx, f.s, f.key, f.off, -1)
		if err != nil {
			return 0, err
		}
		f.r = r
		context.AfterFunc(f.ctx, func() { r.Close() })
	}
	n, err := f.r.Read(p)
	f.off += int64(n)
	return n, err
}
