package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestExecOnMinIO runs a step pod's exec against a real MinIO: the input is
// fetched from the bucket, the outputs (a file and a directory) land there
// as real objects with their metadata.
func TestExecOnMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "pods"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	root := "s3://pods/team"
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(src, []byte("x\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := artifacts.Publish(ctx, store, record.OutputKey("run-9", "prep", "rows"), src, artifacts.Metadata{Type: components.TypeDataset}); err != nil {
		t.Fatal(err)
	}
	comp := component(t,
		[]components.ProgramIO{{Name: "rows", Type: "Dataset"}},
		[]components.ProgramIO{{Name: "copy", Type: "Dataset"}, {Name: "shards", Type: "Artifact"}, {Name: "lines", Type: "int"}},
		`cp "$1" "$2"; mkdir -p "$3/part"; head -2 "$1" > "$3/part/a.csv"; tail -1 "$1" > "$3/b.csv"; wc -l < "$1" | tr -d ' ' > "$4"`,
		"{{inputs.rows.path}}", "{{outputs.copy.path}}", "{{outputs.shards.path}}", "{{outputs.lines.path}}")
	step := stepSpec(t, plan.Wiring{Step: "split", Inputs: map[string]plan.OutputRef{"rows": {Step: "prep", Output: "rows"}}})
	outParams := filepath.Join(t.TempDir(), "outputs")
	if _, stderr, err := runExec(t, root, nil, "--run=run-9", "--component="+comp, "--step="+step,
		"--output-params="+outParams, "--work="+t.TempDir()); err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	// Real object names, browsable with any S3 client.
	var keys []string
	for obj := range srv.Client().ListObjects(ctx, "pods", minio.ListObjectsOptions{Prefix: "team/run-9/split/", Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	sort.Strings(keys)
	want := []string{
		"team/run-9/split/copy", "team/run-9/split/copy.meta.json",
		"team/run-9/split/inputs.json",  // the input artifacts it read (its lineage)
		"team/run-9/split/outputs.json", // the step's typed outputs record
		"team/run-9/split/shards.meta.json", "team/run-9/split/shards/b.csv", "team/run-9/split/shards/part/a.csv",
		"team/run-9/split/step.log", // the step's log, kept with the run
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("objects in the bucket (-want +got):\n%s", diff)
	}
	dest := filepath.Join(t.TempDir(), "shards")
	if _, err := artifacts.Fetch(ctx, store, record.OutputKey("run-9", "split", "shards"), dest, artifacts.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "part", "a.csv")); !bytes.Equal(b, []byte("x\n1\n")) {
		t.Errorf("shards/part/a.csv = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(outParams, "lines")); string(b) != "3" {
		t.Errorf("output parameter lines = %q, want 3", b)
	}
}
