package recordstore

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components/record"
)

// On an S3 store, gc aborts the incomplete multipart uploads that writers
// which died left below the runs that no longer run (a finished run, a run
// whose runner died), and leaves those of running runs, of a run whose id
// only starts the same, and of objects outside the store alone.
func TestCollectGarbageS3Uploads(t *testing.T) {
	ctx := context.Background()
	s, srv := newTestS3(t, "team/runs", artifacts.S3Options{})
	host, _ := os.Hostname()
	me := ThisRunner()
	for _, r := range []*record.Run{
		{ID: "done-1", Status: record.StatusSucceeded},
		{ID: "died-1", Status: record.StatusRunning, Runner: &record.RunnerInfo{Host: host, PID: me.PID, Start: me.Start + "0"}},
		{ID: "live-1", Status: record.StatusRunning, Runner: me},
		{ID: "done-10", Status: record.StatusRunning, Runner: me},
	} {
		if err := WriteRun(ctx, s, r); err != nil {
			t.Fatal(err)
		}
	}
	// What a writer killed mid-upload leaves: a multipart upload with a part
	// sent, never completed nor aborted.
	core := minio.Core{Client: srv.Client()}
	abandon := func(object string) {
		t.Helper()
		id, err := core.NewMultipartUpload(ctx, testBucket, object, minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		part := bytes.Repeat([]byte("x"), 5<<20)
		if _, err := core.PutObjectPart(ctx, testBucket, object, id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := []string{"team/runs/done-1/train/model/weights.bin", "team/runs/done-1/train/model/opt.bin", "team/runs/died-1/prep/data"}
	kept := []string{"team/runs/live-1/train/model", "team/runs/done-10/train/model", "other/done-1/train/model"}
	for _, o := range append(slices.Clone(gone), kept...) {
		abandon(o)
	}
	if err := s.Put(ctx, "done-1/train/metrics", strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}

	did, err := CollectGarbage(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"run died-1: aborted 1 incomplete multipart upload(s)",
		"run died-1: recorded as Failed (runner died)",
		"run done-1: aborted 2 incomplete multipart upload(s)",
	}
	slices.Sort(did)
	if diff := cmp.Diff(want, did); diff != "" {
		t.Errorf("CollectGarbage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(kept, incompleteUploads(t, srv.Client())); diff != "" {
		t.Errorf("incomplete uploads left (-want +got):\n%s", diff)
	}
	if _, err := s.Stat(ctx, "done-1/train/metrics"); err != nil {
		t.Errorf("a finished run's object: %v", err)
	}
	// Nothing left to do: a second gc does nothing.
	if did, err := CollectGarbage(ctx, s); err != nil || len(did) != 0 {
		t.Errorf("second CollectGarbage = %q, %v; want nothing", did, err)
	}
}

// incompleteUploads lists the objects of the test bucket with incomplete
// multipart uploads, in the order created above.
func incompleteUploads(t *testing.T, c *minio.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []string
	for u := range c.ListIncompleteUploads(ctx, testBucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		got = append(got, u.Key)
	}
	order := map[string]int{"team/runs/live-1/train/model": 0, "team/runs/done-10/train/model": 1, "other/done-1/train/model": 2}
	slices.SortFunc(got, func(a, b string) int { return order[a] - order[b] })
	return got
}

// testBucket is the bucket of the test stores.
const testBucket = "pipectl-test"

// newTestS3 starts a MinIO server with the bucket testBucket and returns
// the S3 store at prefix in it, opened with opts and the server's
// endpoint and keys.
func newTestS3(t *testing.T, prefix string, opts artifacts.S3Options) (artifacts.Store, *miniotest.Server) {
	t.Helper()
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(t.Context(), testBucket); err != nil {
		t.Fatal(err)
	}
	opts.Endpoint, opts.AccessKey, opts.SecretKey = srv.Endpoint, srv.AccessKey, srv.SecretKey
	s, err := artifacts.NewS3(t.Context(), testBucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}
