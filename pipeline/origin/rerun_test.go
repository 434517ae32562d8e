package origin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
)

// writeTree writes files (by slash path) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	testComponent = "apiVersion: pipectl.dev/v1alpha1\nkind: Component\nmetadata: {name: c}\ncommand: [sh, run.sh]\n"
	testPipeline  = "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - {name: a, component: %s}\n"
)

// TestShipAndRestore: the pipeline's folder is stored once and comes back
// whole under another folder; a component beside it in the same git
// checkout comes along (the pack is of their common folder), one outside
// any checkout does not; a record without a pack, or naming a file outside
// it, is refused.
func TestShipAndRestore(t *testing.T) {
	ctx := t.Context()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ship := func(file string) *record.PipelineSource {
		t.Helper()
		p, err := pipeline.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		src, err := ShipPipeline(ctx, store, p, codepack.Defaults)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	restore := func(src *record.PipelineSource, want ...string) {
		t.Helper()
		root := filepath.Join(t.TempDir(), "pipeline")
		file, err := Restore(ctx, store, &record.Run{ID: "r", Origin: &record.Origin{Pipeline: src}}, root)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(w))); err != nil {
				t.Errorf("restored %s: %v", w, err)
			}
		}
		if _, err := pipeline.Load(file); err != nil {
			t.Errorf("the restored pipeline: %v", err)
		}
	}

	// Components inside the pipeline's folder.
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"p.yaml": fmt.Sprintf(testPipeline, "c/c.yaml"), "c/c.yaml": testComponent, "c/run.sh": "echo hi\n"})
	src := ship(filepath.Join(dir, "p.yaml"))
	if src.File != "p.yaml" || codepack.CheckDigest(src.Pack) != nil {
		t.Fatalf("ShipPipeline = %+v", src)
	}
	restore(src, "c/run.sh")

	// A component in a sibling folder of a git checkout.
	repo := t.TempDir()
	writeTree(t, repo, map[string]string{"pipes/p.yaml": fmt.Sprintf(testPipeline, "../comps/c.yaml"), "comps/c.yaml": testComponent, "comps/run.sh": "echo hi\n"})
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	src = ship(filepath.Join(repo, "pipes", "p.yaml"))
	if src.File != "pipes/p.yaml" {
		t.Errorf("in a checkout: file %q, want pipes/p.yaml (the pack of the folder holding both)", src.File)
	}
	restore(src, "comps/run.sh")

	// The same outside any checkout: only the pipeline's folder.
	plain := t.TempDir()
	writeTree(t, plain, map[string]string{"pipes/p.yaml": fmt.Sprintf(testPipeline, "../comps/c.yaml"), "comps/c.yaml": testComponent})
	if src := ship(filepath.Join(plain, "pipes", "p.yaml")); src.File != "p.yaml" {
		t.Errorf("outside a checkout: file %q, want p.yaml (the pipeline's folder alone)", src.File)
	}

	for _, bad := range []*record.Run{
		{ID: "old"},
		{ID: "out", Origin: &record.Origin{Pipeline: &record.PipelineSource{Pack: src.Pack, File: "../p.yaml"}}},
		{ID: "missing", Origin: &record.Origin{Pipeline: &record.PipelineSource{Pack: src.Pack, File: "nope.yaml"}}},
	} {
		if _, err := Restore(ctx, store, bad, filepath.Join(t.TempDir(), "pipeline")); err == nil {
			t.Errorf("Restore of run %s: no error", bad.ID)
		}
	}
}

// TestFrom: --from turns the cache off for the step and what is
// downstream of it, not for what is upstream or beside it.
// countingStore counts the objects put.
type countingStore struct {
	artifacts.Store
	puts int
}

func (s *countingStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	s.puts++
	return s.Store.Put(ctx, key, r, size)
}

// TestShipPipelineReusesTheComponentsPack: when a component runs in the
// pipeline's folder and its code pack is stored (a cluster run ships it
// first), the pipeline's pack is that one: the folder is not packed again
// (a file written since is not in it); a pack not yet stored is stored.
func TestShipPipelineReusesTheComponentsPack(t *testing.T) {
	ctx := t.Context()
	local, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: local}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"p.yaml": fmt.Sprintf(testPipeline, "c.yaml"), "c.yaml": testComponent, "run.sh": "echo hi\n"})
	p, err := pipeline.Load(filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StampCode(ctx, func(ctx context.Context, d string) (string, error) {
		return codepack.Digest(ctx, d, codepack.Defaults)
	}); err != nil {
		t.Fatal(err)
	}
	first, err := ShipPipeline(ctx, store, p, codepack.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if store.puts != 1 || first.Pack != p.Steps[0].Resolved.Code {
		t.Fatalf("not stored yet: %d puts, pack %s, want 1 put of the component's pack %s", store.puts, first.Pack, p.Steps[0].Resolved.Code)
	}
	// A file written since the components were stamped is not packed:
	// the pipeline's pack is the code the steps run.
	writeTree(t, dir, map[string]string{"late.txt": "after the stamp\n"})
	again, err := ShipPipeline(ctx, store, p, codepack.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if store.puts != 1 || *again != *first {
		t.Errorf("stored already: %d puts (want none more), source %+v, want %+v", store.puts, again, first)
	}
}

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
	p, err := pipeline.Load(filepath.Join("..", "..", "examples", "attrition", "pipeline.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ShipPipeline(b.Context(), store, p, codepack.Defaults); err != nil {
			b.Fatal(err)
		}
	}
}
