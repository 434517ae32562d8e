package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/root"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pipectl": func() { os.Exit(root.Main(os.Args[1:])) },
	})
}

// TestScripts runs the CLI sessions in testdata/script: each reads like a
// user's session with pipectl.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PIPECTL_ARTIFACTS", "")
			return nil
		},
	})
}

// TestScriptsS3 runs the sessions in testdata/s3 against a real MinIO
// server; $S3_ENDPOINT, $AWS_* and $PIPECTL_ARTIFACTS point at it.
func TestScriptsS3(t *testing.T) {
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(context.Background(), "runs"); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/s3",
		Setup: func(env *testscript.Env) error {
			env.Setenv("S3_ENDPOINT", srv.Endpoint)
			env.Setenv("S3_SECRET", srv.SecretKey)
			env.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
			env.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
			env.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
			env.Setenv("AWS_REGION", "us-east-1")
			env.Setenv("PIPECTL_ARTIFACTS", "s3://runs/team-a")
			return nil
		},
	})
}
