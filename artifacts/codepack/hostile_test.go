package codepack

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// TestWriteResolvesLinkChains: links each lexically inside the folder
// whose chain lands outside it (b/up -> .., x -> b/up/../../etc/passwd)
// are refused at pack time; a chain that stays inside is kept.
func TestWriteResolvesLinkChains(t *testing.T) {
	dir := tree(t, map[string]string{"a.py": "1", "b/": ""})
	if err := os.Symlink("..", filepath.Join(dir, "b", "up")); err != nil {
		t.Fatal(err)
	}
	if _, err := Digest(context.Background(), dir, Defaults); err != nil {
		t.Fatalf("b/up -> .. stays inside: %v", err)
	}
	if err := os.Symlink("b/up/a.py", filepath.Join(dir, "ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := Digest(context.Background(), dir, Defaults); err != nil {
		t.Fatalf("ok -> b/up/a.py stays inside: %v", err)
	}
	if err := os.Symlink("b/up/../../etc/passwd", filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	_, err := Digest(context.Background(), dir, Defaults)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "x")+": a link to b/up/../../etc/passwd, outside the folder") {
		t.Fatalf("a chain out of the folder: %v", err)
	}
}

// TestFetchBounded: a pack with a name 100,000 folders deep is refused at
// once; a pack followed by a gigabyte is not read to the end; a fetch
// whose context is cancelled stops.
func TestFetchBounded(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) string {
		sum := sha256.Sum256(b)
		d := Prefix + hex.EncodeToString(sum[:])
		if err := store.Put(ctx, Key(d), bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var deep bytes.Buffer
	tw := tar.NewWriter(&deep)
	tw.WriteHeader(&tar.Header{Name: strings.Repeat("d/", 100000) + "x", Typeflag: tar.TypeReg, Mode: 0o644, Size: 0, Format: tar.FormatPAX})
	tw.Close()
	d := put(deep.Bytes())
	start := time.Now()
	err = Fetch(ctx, store, d, filepath.Join(t.TempDir(), "code"), Defaults)
	if err == nil || !strings.Contains(err.Error(), "a name over 4096 bytes") || time.Since(start) > 2*time.Second {
		t.Errorf("a name 100,000 folders deep: %v after %v", err, time.Since(start))
	}

	// A valid pack, then 64 MiB of zeros: the object is refused after at
	// most 10 KiB past the archive's end.
	var pack bytes.Buffer
	p, err := Write(ctx, tree(t, map[string]string{"a.py": "1"}), &pack, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "big")
	f, _ := os.Create(big)
	f.Write(pack.Bytes())
	f.Truncate(int64(pack.Len()) + 64<<20)
	f.Close()
	bf, _ := os.Open(big)
	defer bf.Close()
	if err := store.Put(ctx, Key(p.Digest), bf, int64(pack.Len())+64<<20); err != nil {
		t.Fatal(err)
	}
	counted := &countingStore{Store: store}
	err = Fetch(ctx, counted, p.Digest, filepath.Join(t.TempDir(), "code"), Defaults)
	if err == nil || !strings.Contains(err.Error(), "after the end of the archive") {
		t.Errorf("a pack followed by 64 MiB: %v", err)
	}
	if counted.read > int64(pack.Len())+1<<20 {
		t.Errorf("read %d bytes of a %d-byte pack followed by zeros", counted.read, pack.Len())
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Fetch(cctx, store, p.Digest, filepath.Join(t.TempDir(), "code"), Defaults); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("a cancelled fetch: %v", err)
	}
}

// countingStore counts the bytes read from its objects.
type countingStore struct {
	artifacts.Store
	read int64
}

func (c *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := c.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return &countingReader{rc, c}, nil
}

type countingReader struct {
	io.ReadCloser
	c *countingStore
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.c.read += int64(n)
	return n, err
}
