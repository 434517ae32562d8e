package codepack

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
)

// s3Store is a store in a real MinIO server's bucket.
func s3Store(tb testing.TB) artifacts.Store {
	tb.Helper()
	srv := miniotest.Start(tb)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "code"); err != nil {
		tb.Fatal(err)
	}
	s, err := artifacts.Open(ctx, "s3://code/runs", artifacts.Options{S3: artifacts.S3Options{
		Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Region: "us-east-1"}})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The example's train folder through MinIO: shipped once, fetched whole.
func TestShipAndFetchS3(t *testing.T) {
	ctx := context.Background()
	store := s3Store(t)
	dir := filepath.Join("..", "..", "examples", "attrition", "components", "train")
	p, up, err := Ship(ctx, store, dir, Defaults)
	if err != nil || !up {
		t.Fatalf("Ship: %v (uploaded %v)", err, up)
	}
	if _, again, err := Ship(ctx, store, dir, Defaults); err != nil || again {
		t.Fatalf("a second Ship: %v (uploaded %v), want the stored pack reused", err, again)
	}
	dest := filepath.Join(t.TempDir(), "code")
	if err := Fetch(ctx, store, p.Digest, dest, Defaults); err != nil {
		t.Fatal(err)
	}
	if got := digest(t, dest); got != p.Digest {
		t.Fatalf("unpacked %s, want %s", got, p.Digest)
	}
}

// BenchmarkFetchS3 is BenchmarkFetch from a MinIO server on loopback, as a
// step pod fetches its code.
func BenchmarkFetchS3(b *testing.B) {
	ctx := context.Background()
	store := s3Store(b)
	p, _, err := Ship(ctx, store, filepath.Join("..", "..", "examples", "attrition", "components", "train"), Defaults)
	if err != nil {
		b.Fatal(err)
	}
	parent := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		if err := Fetch(ctx, store, p.Digest, filepath.Join(parent, fmt.Sprint(i)), Defaults); err != nil {
			b.Fatal(err)
		}
	}
}
