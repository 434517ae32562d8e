package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract: whatever the archive, Extract never panics and never
// writes outside its folder: every path it leaves resolves inside it.
func FuzzExtract(f *testing.F) {
	f.Add(archive(reg("a"), link("l", "a")))
	f.Add(archive(&tar.Header{Name: "b/", Typeflag: tar.TypeDir}, link("b/up", ".."), link("x", "b/up/../../etc/passwd")))
	f.Add(archive(link("a", "b/c"), link("b/c", ".."), reg("z/../y")))
	f.Add(archive(reg("./x"), reg("/y")))
	f.Fuzz(func(t *testing.T, b []byte) {
		parent := t.TempDir()
		dest := filepath.Join(parent, "d")
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		r := NewReader(context.Background(), bytes.NewReader(b), Limits{MaxEntries: 100, MaxBytes: 1 << 20})
		_ = r.Extract(dest, Options{Links: true})
		if left, _ := os.ReadDir(parent); len(left) != 1 {
			t.Fatalf("wrote beside the folder: %v", left)
		}
		real, err := filepath.EvalSymlinks(dest)
		if err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Type()&os.ModeSymlink == 0 {
				return nil
			}
			r, err := filepath.EvalSymlinks(p)
			if err == nil && r != real && !strings.HasPrefix(r, real+string(filepath.Separator)) {
				t.Fatalf("%s resolves to %s, outside %s", p, r, real)
			}
			return nil
		})
	})
}
