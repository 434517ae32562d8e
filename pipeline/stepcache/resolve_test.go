package stepcache

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/inputs"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

const resolvePipeline = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
params:
  words: {type: string, default: "one two"}
steps:
  - name: make
    component:
      metadata: {name: make}
      image: x:1
      inputs: [{name: words, type: string}]
      outputs: [{name: text, type: Dataset}, {name: n, type: int}]
      command: [sh, make.sh, "{{inputs.words}}", "{{outputs.text.path}}", "{{outputs.n.path}}"]
    inputs: {words: "{{params.words}}"}
  - name: train
    component:
      metadata: {name: train}
      image: x:1
      inputs: [{name: text, type: Dataset}, {name: n, type: int}]
      outputs: [{name: model, type: Model}]
      command: [sh, -c, 'cat "$0" > "$1"', "{{inputs.text.path}}", "{{outputs.model.path}}"]
    inputs: {text: "{{steps.make.outputs.text}}", n: "{{steps.make.outputs.n}}"}
    distributed: {nodes: 2, resources: {gpu: 2}}
`

// TestResolveAll: before a cluster run, every step's fingerprint is the one
// its pod computed in an earlier run (no component directory, the image,
// the cluster's gang shape), so a run whose steps are all cached is known
// in advance; another parameter value, or an entry whose artifact is gone,
// makes it unknown.
func TestResolveAll(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	os.WriteFile(file, []byte(resolvePipeline), 0o644)
	os.WriteFile(filepath.Join(dir, "make.sh"), []byte("# hashed locally, not in a pod\n"), 0o644)
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var steps []*plan.Step
	for _, s := range p.Steps {
		sp, err := plan.Build(p, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, sp)
	}
	params := map[string]string{"words": "one two"}

	// Run r1 as the pods do: each step's plan through the wire, its
	// fingerprint, its outputs published and recorded.
	published := map[string][]record.OutputRecord{}
	upstream := map[string]string{}
	for _, sp := range steps {
		enc, err := wire.Encode(sp.Component)
		if err != nil {
			t.Fatal(err)
		}
		comp, err := plan.DecodeComponent(enc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := comp.WithArgv(nil)
		if err != nil {
			t.Fatal(err)
		}
		inv, sums, err := inputs.Invocation(ctx, store, c, sp.Wiring, plan.Values{Run: "r1", Params: params, Upstream: upstream})
		if err != nil {
			t.Fatal(err)
		}
		inv.Image = sp.Image
		var shape Shape
		if d := sp.Distributed; d != nil {
			shape = Shape{Nodes: d.Nodes, Procs: d.ProcsPerNode}
		}
		fp, err := Fingerprint(ctx, inv, sums, shape)
		if err != nil {
			t.Fatal(err)
		}
		var outs []record.OutputRecord
		for _, o := range c.Outputs {
			if !components.IsArtifact(o.Type) {
				v := "2"
				outs = append(outs, record.OutputRecord{Name: o.Name, Type: o.Type, Value: &v})
				continue
			}
			src := filepath.Join(t.TempDir(), o.Name)
			os.WriteFile(src, []byte(sp.Name+" "+o.Name), 0o644)
			key := record.OutputKey("r1", sp.Name, o.Name)
			meta, err := artifacts.Publish(ctx, store, key, src, artifacts.Metadata{Type: o.Type})
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, record.OutputRecord{Name: o.Name, Type: o.Type, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256})
		}
		if err := recordstore.WriteOutputs(ctx, store, "r1", sp.Name, outs); err != nil {
			t.Fatal(err)
		}
		if err := Record(ctx, store, fp, Entry{Run: "r1", Step: sp.Name, Outputs: outs}); err != nil {
			t.Fatal(err)
		}
		published[sp.Name] = outs
		upstream["n"] = "2" // train's input n is fed by make's n
	}

	entries, ok, err := ResolveAll(ctx, store, steps, "r2", params)
	if err != nil || !ok {
		t.Fatalf("ResolveAll = %v, %v; want every step cached", ok, err)
	}
	for _, sp := range steps {
		if e := entries[sp.Name]; e.Run != "r1" || len(e.Outputs) != len(published[sp.Name]) {
			t.Errorf("step %s: entry %+v, want r1's", sp.Name, e)
		}
	}
	if _, ok, err := ResolveAll(ctx, store, steps, "r2", map[string]string{"words": "three"}); ok || err != nil {
		t.Errorf("another parameter value: ResolveAll = %v, %v; want not cached", ok, err)
	}
	if err := store.Delete(ctx, record.OutputKey("r1", "train", "model")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ResolveAll(ctx, store, steps, "r2", params); ok || err != nil {
		t.Errorf("train's model gone: ResolveAll = %v, %v; want not cached", ok, err)
	}
}
