package local

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestRunNested runs a pipeline that uses another twice, with different
// params: the inner steps run as OUTER.INNER, each with its own record
// and outputs, and an output the inner pipeline declares feeds a step
// downstream.
func TestRunNested(t *testing.T) {
	f := newFixture(t)
	sub := header + `params:
  word: {type: string}
  times: {type: int, default: 1}
steps:
  - name: say
` + shComponent("say", "{name: word, type: string}, {name: times, type: int}", "{name: text, type: Artifact}",
		`for i in $(seq "$2"); do printf '%s\n' "$1"; done > "$3"`, "{{inputs.word}}", "{{inputs.times}}", "{{outputs.text.path}}") + `
    inputs: {word: "<{{params.word}}>", times: "{{params.times}}"}
outputs:
  text: "{{steps.say.outputs.text}}"
`
	if err := os.WriteFile(filepath.Join(f.dir, "say.pipeline.yaml"), []byte(sub), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.load(header + `params:
  w: {type: string, default: "a b"}
steps:
  - name: one
    component: say.pipeline.yaml
    inputs: {word: "{{params.w}}"}
  - name: two
    component: say.pipeline.yaml
    inputs: {word: "2.50", times: 2}
  - name: join
` + shComponent("join", "{name: a, type: Artifact}, {name: b, type: Artifact}", "{name: out, type: Artifact}",
		`cat "$1" "$2" > "$3"`, "{{inputs.a.path}}", "{{inputs.b.path}}", "{{outputs.out.path}}") + `
    inputs: {a: "{{steps.one.outputs.text}}", b: "{{steps.two.outputs.text}}"}
`)
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
	}
	want := map[string]string{"one.say": "Succeeded", "two.say": "Succeeded", "join": "Succeeded"}
	if diff := cmp.Diff(want, stepStatus(run)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	for key, wantText := range map[string]string{
		"one.say/text": "<a b>\n",
		"two.say/text": "<2.50>\n<2.50>\n",
		"join/out":     "<a b>\n<2.50>\n<2.50>\n",
	} {
		out, err := recordstore.Resolve(ctx, f.store, run.ID+"/"+key)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := artifacts.Copy(ctx, f.store, out.Key, &buf, out.Meta.SHA256); err != nil {
			t.Fatal(err)
		}
		if buf.String() != wantText {
			t.Errorf("%s = %q, want %q", key, buf.String(), wantText)
		}
	}
	rec, err := recordstore.ReadRun(ctx, f.store, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one.say", "two.say"}, rec.Step("join").DependsOn); diff != "" {
		t.Errorf("join dependsOn (-want +got):\n%s", diff)
	}
}

// TestRunKFPGraph runs KFP v1 graph components (a graph using a graph,
// stdlib-Python container components) and checks the values KFP's
// semantics give: graph input defaults, literals, task outputs.
func TestRunKFPGraph(t *testing.T) {
	f := newFixture(t)
	p, err := pipeline.Load("../testdata/kfpgraph/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.run(context.Background(), p, map[string]string{"start": "1.0"}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
	}
	got := map[string]string{}
	for _, s := range run.Steps {
		for _, o := range s.Outputs {
			if o.Value != nil {
				got[s.Name+"/"+o.Name] = *o.Value
			}
		}
	}
	want := map[string]string{
		"twice.inner.add-first/sum": "2.5",   // start + the default 1.5
		"twice.inner.add-again/sum": "2.75",  // + the literal 0.25
		"sum.add-first/sum":         "4.25",  // twice's result + 1.5
		"sum.add-again/sum":         "14.25", // + the graph input's default 10
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}
