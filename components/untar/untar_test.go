package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// archive is a tar of hdrs, each file's bytes "x" repeated.
func archive(hdrs ...*tar.Header) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg && h.Size > 0 {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func extract(t *testing.T, b []byte, opts Options) (string, error) {
	t.Helper()
	dest := t.TempDir()
	err := NewReader(context.Background(), bytes.NewReader(b), Limits{MaxEntries: 50, MaxBytes: 1 << 20}).Extract(dest, opts)
	return dest, err
}

func reg(name string) *tar.Header { return &tar.Header{Name: name, Size: 1, Typeflag: tar.TypeReg} }
func link(name, target string) *tar.Header {
	return &tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink}
}

// TestRefuses: every hostile entry is refused with why.
func TestRefuses(t *testing.T) {
	deep := strings.Repeat("d/", 100000) + "x"
	for name, tc := range map[string]struct {
		hdrs []*tar.Header
		want string
	}{
		"dotdot":       {[]*tar.Header{reg("../x")}, "without . or .. segments"},
		"absolute":     {[]*tar.Header{reg("/tmp/x")}, "without . or .. segments"},
		"dot":          {[]*tar.Header{reg("a/./x")}, "without . or .. segments"},
		"link out":     {[]*tar.Header{link("l", "../../etc")}, "outside the folder"},
		"link abs":     {[]*tar.Header{link("l", "/etc/passwd")}, "outside the folder"},
		"link chain":   {[]*tar.Header{{Name: "b/", Typeflag: tar.TypeDir}, link("b/up", ".."), link("x", "b/up/../../etc/passwd")}, `link "x" to "b/up/../../etc/passwd": it lands outside`},
		"link chain 2": {[]*tar.Header{link("a", "b/c"), link("b/c", ".."), link("x", "a/../..")}, "outside the folder"},
		"link loop":    {[]*tar.Header{link("a", "b"), link("b", "a"), link("x", "a/y")}, "more than 40 links"},
		"below link":   {[]*tar.Header{link("l", "sub"), reg("l/x")}, `entry "l/x" is below the link "l"`},
		"device":       {[]*tar.Header{{Name: "dev", Typeflag: tar.TypeChar}}, "is not a file, folder or link"},
		"hard link":    {[]*tar.Header{{Name: "h", Linkname: "/etc/shadow", Typeflag: tar.TypeLink}}, "is not a file, folder or link"},
		"duplicate":    {[]*tar.Header{reg("a"), reg("a")}, "exists"},
		"too big":      {[]*tar.Header{{Name: "big", Size: 2 << 20, Typeflag: tar.TypeReg}}, "more than 1 MiB"},
		"too deep":     {[]*tar.Header{reg(deep)}, "a name over 4096 bytes"},
		"deep short":   {[]*tar.Header{reg(strings.Repeat("d/", 200) + "x")}, "over 128 folders deep"},
		"too many": {func() (h []*tar.Header) {
			for i := range 51 {
				h = append(h, reg(strings.Repeat("f", i+1)))
			}
			return h
		}(), "more than 50 entries"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			dest, err := extract(t, archive(tc.hdrs...), Options{Links: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if _, err := os.Lstat(filepath.Join(dest, "x")); err == nil && strings.HasPrefix(name, "link") {
				t.Errorf("the link was made")
			}
		})
	}
}

// TestExtract: files, folders and links that stay inside are written;
// a link through a link that stays inside is kept.
func TestExtract(t *testing.T) {
	dest, err := extract(t, archive(
		&tar.Header{Name: "lib/", Typeflag: tar.TypeDir}, reg("lib/a.py"), link("b/up", ".."), link("x", "b/up/lib/a.py"), link("y", "lib/../lib/a.py"),
		&tar.Header{Name: "run.sh", Size: 1, Mode: 0o750, Typeflag: tar.TypeReg},
	), Options{Links: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"x", "y"} {
		if b, err := os.ReadFile(filepath.Join(dest, n)); err != nil || string(b) != "x" {
			t.Errorf("%s: %q, %v", n, b, err)
		}
	}
	if info, err := os.Stat(filepath.Join(dest, "run.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v, %v", info, err)
	}
	if _, err := extract(t, archive(link("x", "a")), Options{}); err == nil || !strings.Contains(err.Error(), "is a link") {
		t.Errorf("a link where none is allowed: %v", err)
	}
}

// TestRooted: an image's "./" and "/" names are read from the folder only
// when allowed.
func TestRooted(t *testing.T) {
	for _, n := range []string{"./models/a", "/models/a", "models/a"} {
		if got, err := CleanName(n, Limits{Rooted: true}); err != nil || got != "models/a" {
			t.Errorf("CleanName(%q, rooted) = %q, %v", n, got, err)
		}
	}
	if _, err := CleanName("/models/a", Limits{}); err == nil {
		t.Error("an absolute name is accepted")
	}
}

// TestTrailer: what follows the archive is read within the bound only.
func TestTrailer(t *testing.T) {
	b := archive(reg("a"))
	for _, tc := range []struct {
		extra int
		ok    bool
	}{{0, true}, {10240, true}, {10241, false}, {1 << 30, false}} {
		r := NewReader(context.Background(), io.MultiReader(bytes.NewReader(b), io.LimitReader(zeros{}, int64(tc.extra))), Limits{})
		if err := r.Extract(t.TempDir(), Options{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := r.Trailer()
		if (err == nil) != tc.ok {
			t.Errorf("%d bytes after the archive: %v", tc.extra, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%d bytes after the archive: took %v", tc.extra, d)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestCancel: a cancelled extraction stops within the file it is writing.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	hdr := &tar.Header{Name: "big", Size: 1 << 40, Typeflag: tar.TypeReg, Mode: 0o644}
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	tw.WriteHeader(hdr)
	r := NewReader(ctx, io.MultiReader(bytes.NewReader(head.Bytes()), zeros{}), Limits{MaxBytes: 1 << 41})
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	err := r.Extract(t.TempDir(), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopped after %v", d)
	}
}
