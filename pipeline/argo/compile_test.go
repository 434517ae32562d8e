package argo

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/pipeline"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the compiler's output")

// testOptions are the options every golden file is compiled with.
func testOptions() Options {
	return Options{
		Image:          "pipectl:test",
		Artifacts:      "s3://ml-artifacts/runs",
		Namespace:      "ml",
		ServiceAccount: "pipectl-step",
		S3Secret:       "pipectl-s3",
		S3Endpoint:     "http://minio.minio:9000",
		S3Region:       "us-east-1",
	}
}

// lint runs Argo's own validation, as `argo lint` does offline.
func lint(t testing.TB, wf *wfv1.Workflow) {
	t.Helper()
	if err := validate.ValidateWorkflow(nil, nil, wf.DeepCopy(), nil, validate.ValidateOpts{Lint: true}); err != nil {
		t.Fatalf("argo lint: %v", err)
	}
}

func compileFile(t testing.TB, path string, opts Options) (*wfv1.Workflow, []byte) {
	t.Helper()
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	wf, err := Compile(p, opts)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	b, err := Marshal(wf)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return wf, b
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"attrition": "../../examples/attrition/pipeline.yaml"}
	for _, f := range files {
		cases[strings.TrimSuffix(filepath.Base(f), ".yaml")] = f
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			wf, got := compileFile(t, src, testOptions())
			lint(t, wf)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pipeline/argo -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from %s (-want +got); run go test ./pipeline/argo -update if intended:\n%s", src, golden, diff)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	_, a := compileFile(t, "../../examples/attrition/pipeline.yaml", testOptions())
	for i := 0; i < 5; i++ {
		_, b := compileFile(t, "../../examples/attrition/pipeline.yaml", testOptions())
		if !bytes.Equal(a, b) {
			t.Fatalf("compile %d gave different bytes:\n%s", i, cmp.Diff(string(a), string(b)))
		}
	}
}
