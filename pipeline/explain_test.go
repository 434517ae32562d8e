package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExplainCoversTheSchema: every field the loader accepts (the Go
// types it decodes into, walked with the function its strict check uses)
// has a doc, and every doc is of a field the loader accepts.
func TestExplainCoversTheSchema(t *testing.T) {
	paths := SchemaPaths()
	if len(paths) < 100 {
		t.Fatalf("the schema has %d fields, expected over 100: %v", len(paths), paths)
	}
	for _, p := range paths {
		d, ok := docFor(p)
		if !ok || strings.TrimSpace(d.Doc) == "" {
			t.Errorf("field %s has no doc: add an entry to fieldDocs (pipeline/fielddocs.go)", p)
		}
	}
	for key := range fieldDocs {
		if !slices.Contains(paths, key) {
			t.Errorf("fieldDocs documents %s, which is no field the loader accepts", key)
		}
	}
}

// TestExplainedFieldsLoad: each pipeline field explain lists is one the
// loader accepts, and a name next to it is refused: a file setting it
// (with a value of the wrong type, so the loader reports the path) is
// refused for its value, never as an unknown field.
func TestExplainedFieldsLoad(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{"steps.distributed.stallTimeout", "steps.loop.parallelism", "steps.retries", "steps.distributed.gang.podGroup.timeout"} {
		f, err := Explain(path)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(path, ".")
		yaml := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - name: s\n    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [\"true\"]}\n"
		indent := "    "
		for _, p := range parts[1 : len(parts)-1] {
			yaml += indent + p + ":\n"
			indent += "  "
		}
		if parts[len(parts)-2] == "distributed" {
			yaml += indent + "nodes: 1\n"
		}
		file := filepath.Join(dir, "p.yaml")
		for _, c := range []struct {
			name  string
			value string
			want  string
		}{
			{f.Name, "[1]", "steps[0]." + strings.Join(parts[1:], ".") + ":"},
			{f.Name + "x", "1", "unknown field"},
		} {
			if err := os.WriteFile(file, []byte(yaml+indent+c.name+": "+c.value+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(file)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: %s: got %v, want an error with %q", path, c.name, c.value, err, c.want)
			}
			if c.want != "unknown field" && strings.Contains(err.Error(), "unknown field") {
				t.Errorf("%s: the loader does not know %s: %v", path, c.name, err)
			}
		}
	}
}

func TestExplain(t *testing.T) {
	f, err := Explain("pipeline.steps.distributed.framework")
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != "string" || f.Default != "torch" || !slices.Equal(f.Values, []string{"torch", "jax", "xgboost", "mpi"}) {
		t.Errorf("framework: %+v", f)
	}
	f, err = Explain("steps.distributed.stallTimeout")
	if err != nil || f.Type != "duration" || f.Path != "pipeline.steps.distributed.stallTimeout" || f.Default != "off" {
		t.Errorf("stallTimeout: %+v, %v", f, err)
	}
	f, err = Explain("finally.component.inputs.type")
	if err != nil || !strings.Contains(f.Doc, "artifact type") {
		t.Errorf("an inline component's field in a finally step: %+v, %v", f, err)
	}
	_, err = Explain("steps.distributed.stalTimeout")
	if err == nil || !strings.Contains(err.Error(), `did you mean "stallTimeout"?`) || !strings.Contains(err.Error(), "pipeline.steps.distributed") {
		t.Errorf("a typo: %v", err)
	}
	_, err = Explain("steps.retries.x")
	if err == nil || !strings.Contains(err.Error(), "has no fields") {
		t.Errorf("below a scalar: %v", err)
	}
}
