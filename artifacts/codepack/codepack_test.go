package codepack

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// tree writes files (name → content; a name ending in / is a folder) below a new folder.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func digest(t *testing.T, dir string) string {
	t.Helper()
	d, err := Digest(context.Background(), dir, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDigestIsDeterministic(t *testing.T) {
	files := map[string]string{"train.py": "print(1)\n", "lib/util.py": "x = 1\n", "lib/b/": "", "z": ""}
	a, b := tree(t, files), tree(t, files)
	// Times, permissions beyond the execute bit, and caches do not count.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(b, "train.py"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(b, "lib", "util.py"), 0o664); err != nil {
		t.Fatal(err)
	}
	for _, skip := range []string{"__pycache__/train.cpython-311.pyc", ".git/HEAD", ".pipectl/run/run.json"} {
		p := filepath.Join(b, filepath.FromSlash(skip))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	da, db := digest(t, a), digest(t, b)
	if da != db {
		t.Fatalf("the same files give %s and %s", da, db)
	}
	if err := CheckDigest(da); err != nil {
		t.Fatal(err)
	}
	// An edit, an execute bit, a new empty folder and a rename each change it.
	for name, change := range map[string]func(dir string) error{
		"edit": func(d string) error {
			return os.WriteFile(filepath.Join(d, "lib", "util.py"), []byte("x = 2\n"), 0o644)
		},
		"exec":   func(d string) error { return os.Chmod(filepath.Join(d, "train.py"), 0o755) },
		"folder": func(d string) error { return os.Mkdir(filepath.Join(d, "new"), 0o755) },
		"rename": func(d string) error { return os.Rename(filepath.Join(d, "z"), filepath.Join(d, "y")) },
	} {
		c := tree(t, files)
		if err := change(c); err != nil {
			t.Fatal(err)
		}
		if dc := digest(t, c); dc == da {
			t.Errorf("%s: the digest did not change", name)
		}
	}
}

func TestIgnoreFile(t *testing.T) {
	files := map[string]string{"train.py": "1", "lib/u.py": "2", ".pipectlignore": "# outputs\n*.csv\nout/\nlib/tmp\n"}
	base := digest(t, tree(t, files))
	for _, extra := range []string{"a.csv", "lib/b.csv", "out/model.pt", "lib/tmp"} {
		dir := tree(t, files)
		p := filepath.Join(dir, filepath.FromSlash(extra))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if d := digest(t, dir); d != base {
			t.Errorf("%s, which .pipectlignore names, changed the digest", extra)
		}
	}
	dir := tree(t, files)
	os.WriteFile(filepath.Join(dir, "lib", "c.py"), []byte("x"), 0o644)
	if digest(t, dir) == base {
		t.Error("lib/c.py, which .pipectlignore does not name, did not change the digest")
	}
	bad := tree(t, map[string]string{".pipectlignore": "ok\n[\n"})
	if _, err := Digest(context.Background(), bad, Defaults); err == nil || !strings.Contains(err.Error(), ".pipectlignore:2") {
		t.Errorf("a bad pattern: %v, want an error naming .pipectlignore:2", err)
	}
}

func TestWriteRefuses(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		setup func(dir string) error
		lim   Options
		want  string
	}{
		"absolute link":  {func(d string) error { return os.Symlink("/etc/passwd", filepath.Join(d, "p")) }, Defaults, "a link to /etc/passwd, outside the folder"},
		"link upwards":   {func(d string) error { return os.Symlink("../../x", filepath.Join(d, "sub", "p")) }, Defaults, "outside the folder"},
		"fifo":           {func(d string) error { return syscall.Mkfifo(filepath.Join(d, "sub", "pipe"), 0o644) }, Defaults, "a special file"},
		"too many bytes": {func(d string) error { return os.WriteFile(filepath.Join(d, "big"), make([]byte, 2<<20), 0o644) }, Options{MaxBytes: 1 << 20}, "more than 1 MiB"},
		"too many files": {func(d string) error { return nil }, Options{MaxFiles: 2}, "more than 2 files"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := tree(t, map[string]string{"sub/a.py": "1", "b.py": "2"})
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			_, err := Digest(ctx, dir, tc.lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want an error naming the file in %s with %q", err, dir, tc.want)
			}
		})
	}
	// A link that stays inside is kept.
	dir := tree(t, map[string]string{"sub/a.py": "1"})
	if err := os.Symlink("sub/a.py", filepath.Join(dir, "a.py")); err != nil {
		t.Fatal(err)
	}
	if _, err := Digest(ctx, dir, Defaults); err != nil {
		t.Fatal(err)
	}
}

func TestShipAndFetch(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{"train.py": "print('hi')\n", "lib/util.py": "x = 1\n", "empty/": ""})
	if err := os.Chmod(filepath.Join(dir, "train.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("lib/util.py", filepath.Join(dir, "util.py")); err != nil {
		t.Fatal(err)
	}
	p, uploaded, err := Ship(ctx, store, dir, Defaults)
	if err != nil || !uploaded {
		t.Fatalf("Ship: %v, uploaded %v", err, uploaded)
	}
	if p.Digest != digest(t, dir) {
		t.Fatalf("Ship's digest %s is not Digest's", p.Digest)
	}
	if _, again, err := Ship(ctx, store, dir, Defaults); err != nil || again {
		t.Fatalf("a second Ship: %v, uploaded %v (want stored once)", err, again)
	}
	dest := filepath.Join(t.TempDir(), "code")
	if err := Fetch(ctx, store, p.Digest, dest, Defaults); err != nil {
		t.Fatal(err)
	}
	if got := digest(t, dest); got != p.Digest {
		t.Fatalf("the unpacked folder's digest is %s, want %s", got, p.Digest)
	}
	if info, err := os.Stat(filepath.Join(dest, "train.py")); err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("train.py: %v, %v (want 0755)", info, err)
	}
	if target, err := os.Readlink(filepath.Join(dest, "util.py")); err != nil || target != "lib/util.py" {
		t.Fatalf("util.py: %q, %v (want a link to lib/util.py)", target, err)
	}
	// dest exists: no second unpack over it.
	if err := Fetch(ctx, store, p.Digest, dest, Defaults); err == nil {
		t.Fatal("Fetch into an existing folder succeeded")
	}
	// A digest the store does not have.
	missing := Prefix + strings.Repeat("0", 64)
	if err := Fetch(ctx, store, missing, filepath.Join(t.TempDir(), "c"), Defaults); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("a missing pack: %v, want ErrNotFound", err)
	}
	if err := Fetch(ctx, store, "sha256:../../etc", filepath.Join(t.TempDir(), "c"), Defaults); err == nil || !strings.Contains(err.Error(), "64 lowercase hex") {
		t.Fatalf("a bad digest: %v", err)
	}
}

func TestFetchRefusesTamperedAndHostilePacks(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(t *testing.T, d string, b []byte) {
		t.Helper()
		if err := store.Put(ctx, Key(d), bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
	}
	archive := func(hdrs ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hdrs {
			tw.WriteHeader(h)
			if h.Size > 0 {
				tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			}
		}
		tw.Close()
		return buf.Bytes()
	}
	// A pack whose bytes were changed after it was stored: nothing is left behind.
	dir := tree(t, map[string]string{"a.py": "1"})
	p, _, err := Ship(ctx, store, dir, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	put(t, p.Digest, archive(&tar.Header{Name: "a.py", Size: 1, Mode: 0o644, Typeflag: tar.TypeReg}, &tar.Header{Name: "evil.py", Size: 3, Mode: 0o644, Typeflag: tar.TypeReg}))
	parent := t.TempDir()
	if err := Fetch(ctx, store, p.Digest, filepath.Join(parent, "code"), Defaults); err == nil || !strings.Contains(err.Error(), "changed after it was stored") {
		t.Fatalf("a tampered pack: %v", err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("a refused pack left %v", left)
	}
	d := Prefix + strings.Repeat("a", 64)
	for name, hdrs := range map[string][]*tar.Header{
		"dotdot":        {{Name: "../x", Size: 1, Typeflag: tar.TypeReg}},
		"absolute":      {{Name: "/tmp/x", Size: 1, Typeflag: tar.TypeReg}},
		"link out":      {{Name: "l", Linkname: "../../etc", Typeflag: tar.TypeSymlink}},
		"through link":  {{Name: "l", Linkname: "sub", Typeflag: tar.TypeSymlink}, {Name: "l/x", Size: 1, Typeflag: tar.TypeReg}},
		"device":        {{Name: "dev", Typeflag: tar.TypeChar}},
		"hard link":     {{Name: "h", Linkname: "/etc/shadow", Typeflag: tar.TypeLink}},
		"duplicate":     {{Name: "a", Size: 1, Typeflag: tar.TypeReg}, {Name: "a", Size: 1, Typeflag: tar.TypeReg}},
		"over the size": {{Name: "big", Size: 2 << 20, Typeflag: tar.TypeReg}},
	} {
		t.Run(name, func(t *testing.T) {
			put(t, d, archive(hdrs...))
			parent := t.TempDir()
			err := Fetch(ctx, store, d, filepath.Join(parent, "code"), Options{MaxBytes: 1 << 20, MaxFiles: 10})
			if err == nil {
				t.Fatal("unpacked")
			}
			left, _ := os.ReadDir(parent)
			if len(left) != 0 {
				t.Fatalf("%v; left %v", err, left)
			}
		})
	}
}

// BenchmarkFetch is what a step pod adds before its program starts: fetch,
// check and unpack the pack of the example's train component from a local
// store.
func BenchmarkFetch(b *testing.B) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := Ship(ctx, store, filepath.Join("..", "..", "examples", "attrition", "components", "train"), Defaults)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(p.Size), "pack-bytes")
	parent := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		if err := Fetch(ctx, store, p.Digest, filepath.Join(parent, fmt.Sprint(i)), Defaults); err != nil {
			b.Fatal(err)
		}
	}
}
