package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts/miniotest"
)

// TestKill9MidPublishS3: `pipectl run` killed with SIGKILL while it uploads
// a 300 MB output to MinIO leaves an incomplete multipart upload and no
// object; `pipectl gc` aborts the upload and records the run as Failed.
func TestKill9MidPublishS3(t *testing.T) {
	bin := buildPipectl(t)
	srv := miniotest.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "runs"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{"AWS_ENDPOINT_URL=" + srv.Endpoint, "AWS_ACCESS_KEY_ID=" + srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + srv.SecretKey, "AWS_REGION=us-east-1", "PIPECTL_ARTIFACTS=s3://runs/team"}
	pipectl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
	// uploads lists the objects with incomplete multipart uploads (MinIO
	// lists them for the whole bucket, not by prefix).
	uploads := func() []string {
		var keys []string
		for u := range srv.Client().ListIncompleteUploads(ctx, "runs", "", true) {
			if u.Err != nil {
				t.Fatal(u.Err)
			}
			keys = append(keys, u.Key)
		}
		return keys
	}

	stderr := killMidPublish(t, bin, dir, env, nil, func() bool { return len(uploads()) > 0 })
	left := uploads()
	if len(left) != 1 || !strings.HasPrefix(left[0], "team/") || !strings.HasSuffix(left[0], "/make/data") {
		t.Fatalf("incomplete uploads after the kill: %q, want team/RUN/make/data\n%s", left, stderr)
	}
	for o := range srv.Client().ListObjects(ctx, "runs", minio.ListObjectsOptions{Prefix: "team/", Recursive: true}) {
		if strings.Contains(o.Key, "/make/data") {
			t.Errorf("object %s visible after the kill", o.Key)
		}
	}

	out, err := pipectl("gc", "--work-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("pipectl gc: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "aborted 1 incomplete multipart upload(s)") {
		t.Errorf("pipectl gc says:\n%s\nwant a line about the aborted upload", out)
	}
	if left := uploads(); len(left) > 0 {
		t.Errorf("incomplete uploads left after gc: %q\n%s", left, out)
	}
	got, err := pipectl("runs", "get", "latest", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"status": "Failed"`) || !strings.Contains(string(got), `"message": "runner died"`) {
		t.Errorf("runs get latest after gc: want Failed, runner died:\n%s", got)
	}
	if out, err := pipectl("gc", "--work-dir", dir).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "nothing to clean up" {
		t.Errorf("second pipectl gc: %v\n%s\nwant nothing to clean up", err, out)
	}
}
