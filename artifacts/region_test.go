package artifacts

import (
	"context"
	"testing"
	"time"
)

// The region of an S3 store is the one it was given, else the one the
// service reported when it was opened, asked of no server after (the
// server is gone when it is read); a local store has none.
func TestRegion(t *testing.T) {
	srv := startMinIO(t)
	reported := openTestS3(t, srv, "runs", S3Options{})
	given := openTestS3(t, srv, "runs", S3Options{Region: "eu-west-3"})
	srv.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if got := Region(ctx, reported); got != "us-east-1" {
		t.Errorf("the region MinIO reported, read with the server gone: %q, want us-east-1", got)
	}
	if got := Region(ctx, given); got != "eu-west-3" {
		t.Errorf("the region given: %q, want eu-west-3", got)
	}
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := Region(ctx, local); got != "" {
		t.Errorf("a local store's region: %q, want none", got)
	}
}
