package origin

import (
	"os"
	"path/filepath"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/pipeline"
)

// TestShipAndRestore: the pipeline's folder is stored once and comes back
// whole under another folder; a record without it, or naming a file
// outside its pack, is refused.
func TestShipAndRestore(t *testing.T) {
	ctx := t.Context()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"p.yaml": "kind: Pipeline\n", "c/run.sh": "echo hi\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := ShipPipeline(ctx, store, filepath.Join(dir, "p.yaml"), codepack.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if src.File != "p.yaml" || codepack.CheckDigest(src.Pack) != nil {
		t.Fatalf("ShipPipeline = %+v", src)
	}
	rec := &artifacts.Run{ID: "r1", Origin: &artifacts.Origin{Pipeline: src}}
	file, err := Restore(ctx, store, rec, filepath.Join(t.TempDir(), "pipeline"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "c", "run.sh")); err != nil || string(b) != "echo hi\n" {
		t.Errorf("restored c/run.sh = %q, %v", b, err)
	}
	for _, bad := range []*artifacts.Run{
		{ID: "old"},
		{ID: "out", Origin: &artifacts.Origin{Pipeline: &artifacts.PipelineSource{Pack: src.Pack, File: "../p.yaml"}}},
		{ID: "missing", Origin: &artifacts.Origin{Pipeline: &artifacts.PipelineSource{Pack: src.Pack, File: "nope.yaml"}}},
	} {
		if _, err := Restore(ctx, store, bad, filepath.Join(t.TempDir(), "pipeline")); err == nil {
			t.Errorf("Restore of run %s: no error", bad.ID)
		}
	}
}

// TestFrom: --from turns the cache off for the step and what is
// downstream of it, not for what is upstream or beside it.
func TestFrom(t *testing.T) {
	p, err := pipeline.Parse("p.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - {name: a, component: {metadata: {name: c}, command: ["true"]}}
  - {name: b, after: [a], component: {metadata: {name: c}, command: ["true"]}}
  - {name: c, after: [b], component: {metadata: {name: c}, command: ["true"]}}
  - {name: d, after: [a], component: {metadata: {name: c}, command: ["true"]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := From(p, "b"); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if want := s.Name == "b" || s.Name == "c"; s.CacheEnabled() == want {
			t.Errorf("step %s: cache enabled %v, want %v", s.Name, s.CacheEnabled(), !want)
		}
	}
	if err := From(p, "nope"); err == nil {
		t.Error("From(nope): no error")
	}
}

// BenchmarkShipPipeline: what keeping the example's pipeline costs a run
// once its pack is in the store (pack, hash, look up).
func BenchmarkShipPipeline(b *testing.B) {
	store, err := artifacts.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join("..", "..", "examples", "attrition", "pipeline.yaml")
	for b.Loop() {
		if _, err := ShipPipeline(b.Context(), store, file, codepack.Defaults); err != nil {
			b.Fatal(err)
		}
	}
}
