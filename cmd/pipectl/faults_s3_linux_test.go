package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	file := filepath.Join(dir, "big.yaml")
	yaml := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: big}
steps:
  - name: make
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: make}
      outputs: [{name: data, type: Dataset}]
      command: [sh, -c, 'head -c 300000000 /dev/zero > "$0"', '{{outputs.data.path}}']
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "AWS_ENDPOINT_URL="+srv.Endpoint, "AWS_ACCESS_KEY_ID="+srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+srv.SecretKey, "AWS_REGION=us-east-1", "PIPECTL_ARTIFACTS=s3://runs/team")
	pipectl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
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

	run := pipectl("run", file)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(uploads()) == 0; i++ {
		if i > 3000 {
			run.Process.Kill()
			t.Fatalf("no multipart upload seen:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	left := uploads()
	if len(left) != 1 || !strings.HasPrefix(left[0], "team/") || !strings.HasSuffix(left[0], "/make/data") {
		t.Fatalf("incomplete uploads after the kill: %q, want team/RUN/make/data\n%s", left, stderr.String())
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
