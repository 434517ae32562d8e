package imports

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline"
)

// TestResolveLeavesAndChecks: values in the store, values of value params
// and URIs that are no import stay as they are, with nothing read; a
// missing configuration of any import fails before anything is read,
// naming each URI. (Imports themselves: TestImport and
// pipeline/local's TestRunKFPv2Import*, against real servers.)
func TestResolveLeavesAndChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
params:
  n: {type: string, default: "gs://b/not-an-artifact"}
  a: {type: Dataset}
  b: {type: Dataset}
  c: {type: Model}
steps:
  - name: s
    inputs: {a: "{{params.a}}", b: "{{params.b}}", c: "{{params.c}}", n: "{{params.n}}"}
    component:
      metadata: {name: s}
      inputs: [{name: a, type: Dataset}, {name: b, type: Dataset}, {name: c, type: Model}, {name: n, type: string}]
      command: [cat, "{{inputs.a.path}}"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	status := func(format string, args ...any) { lines = append(lines, format) }
	none := Options{ImportOptions: ImportOptions{Getenv: func(string) string { return "" }}}
	params := map[string]string{"n": "gs://b/not-an-artifact", "a": s.URI("r1/make/data"), "b": "file:///elsewhere/data", "c": s.URI("r1/train/model")}
	got, err := Resolve(ctx, s, p, params, none, status)
	if err != nil || !cmp.Equal(params, got) || len(lines) != 0 {
		t.Errorf("Resolve = %v, %v (status %q); want the params as they are", got, err, lines)
	}
	params["a"], params["c"] = "gs://bucket/a.csv", "gs://bucket/c"
	_, err = Resolve(ctx, s, p, params, none, status)
	for _, want := range []string{"import gs://bucket/a.csv: set PIPECTL_GS_ENDPOINT", "import gs://bucket/c: set PIPECTL_GS_ENDPOINT"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve without configuration: %v; want %q", err, want)
		}
	}
	if len(lines) != 0 {
		t.Errorf("status %q, want nothing imported", lines)
	}
}
