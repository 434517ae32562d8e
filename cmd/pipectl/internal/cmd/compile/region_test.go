package compile

import (
	"context"
	"regexp"
	"testing"

	"pipectl.dev/pipectl/artifacts/miniotest"
)

// The pods of a workflow compiled against an S3 store whose region no flag
// or variable gives are told the region the service reported (AWS_REGION):
// their store then asks for no bucket location before its first request.
func TestCompileTellsPodsTheRegion(t *testing.T) {
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(context.Background(), "pods"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	out, stderr, err := run(t, nil, example, "--artifacts", "s3://pods/runs")
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`name: AWS_REGION\s+value: us-east-1\n`).MatchString(out) {
		t.Errorf("the workflow gives its pods no AWS_REGION=us-east-1 (MinIO's):\n%s", out)
	}
}
