package argo

import (
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// TestCompileRefusesCredentials: an endpoint or a root with credentials in
// it is refused (they would be written into the workflow), and the error
// does not repeat the secret.
func TestCompileRefusesCredentials(t *testing.T) {
	p, err := pipeline.Load("testdata/fanout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*Options)
		want string
	}{
		"endpoint":          {func(o *Options) { o.S3Endpoint = "http://KEY:TOPSECRET@minio:9000" }, `--s3-endpoint: S3 endpoint "http://REDACTED@minio:9000" holds credentials`},
		"endpoint no host":  {func(o *Options) { o.S3Endpoint = "KEY:TOPSECRET@minio:9000" }, `"REDACTED@minio:9000" holds credentials`},
		"endpoint unparsed": {func(o *Options) { o.S3Endpoint = "http://KEY:TOP SECRET@mi nio" }, `"http://REDACTED@mi nio"`},
		"endpoint with $":   {func(o *Options) { o.S3Endpoint = "http://KEY:TOPSECRET$@minio" }, `"http://REDACTED@minio": must not contain {{ or $`},
		"root":              {func(o *Options) { o.Artifacts = "s3://KEY:TOPSECRET@bucket/runs" }, `--artifacts "s3://REDACTED@bucket/runs" holds credentials`},
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			tc.mod(&o)
			_, err := Compile(p, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "TOPSECRET") || strings.Contains(err.Error(), "TOP SECRET") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}
