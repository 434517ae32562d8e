package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/pipeline"
)

// TestBuildTriggerCompleted: a step with trigger: completed reads the
// outputs of the steps it depends on as Wiring.OrDefault (a value still
// an upstream part of its own, which travels from the outputs record, not
// as --upstream); what the loader cannot see (a nested pipeline's param
// given a step output) is refused here: an input without a default, an
// output in a longer text or a resource.
func TestBuildTriggerCompleted(t *testing.T) {
	p := load(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - name: make
    component: {metadata: {name: make}, outputs: [{name: msg, type: string}, {name: data, type: Dataset}], command: [make]}
  - name: cleanup
    trigger: completed
    component: {metadata: {name: cleanup}, inputs: [{name: m, type: string, default: d}, {name: a, type: Dataset, optional: true}], command: [c, "{{inputs.m}}"]}
    inputs: {m: "{{steps.make.outputs.msg}}", a: "{{steps.make.outputs.data}}"}
`)
	sp, err := Build(p, "cleanup")
	if err != nil {
		t.Fatal(err)
	}
	if !sp.AfterCompleted || !cmp.Equal(sp.Deps, []string{"make"}) {
		t.Errorf("afterCompleted %v, deps %v; want true, [make]", sp.AfterCompleted, sp.Deps)
	}
	w := sp.Wiring
	want := map[string]OutputRef{"m": {Step: "make", Output: "msg"}, "a": {Step: "make", Output: "data"}}
	if diff := cmp.Diff(want, w.OrDefault); diff != "" {
		t.Errorf("orDefault (-want +got):\n%s", diff)
	}
	if len(w.Upstream) > 0 || len(w.Inputs) > 0 || !cmp.Equal(w.Params["m"], Text{{Upstream: "m"}}) {
		t.Errorf("upstream %v, inputs %v, params %v: want m an upstream part, no --upstream value, no input artifact", w.Upstream, w.Inputs, w.Params)
	}
	if make, _ := Build(p, "make"); make.AfterCompleted {
		t.Error("make: afterCompleted, want false")
	}

	dir := t.TempDir()
	inner := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: inner}
params:
  x: {type: string}
steps:
  - name: tidy
    trigger: completed
    component: {metadata: {name: tidy}, inputs: [{name: m, type: string}, {name: n, type: string, default: d}], command: [t, "{{inputs.m}}", "{{inputs.n}}"]}
    inputs: {m: "{{params.x}}", n: "x={{params.x}}"}
    resources: {memory: "{{params.x}}"}
`
	// Each variant fixes the previous one's problem and shows the next.
	withDefault := strings.Replace(inner, "{name: m, type: string}", "{name: m, type: string, default: d}", 1)
	whole := strings.Replace(withDefault, `n: "x={{params.x}}"`, `n: "x"`, 1)
	for _, tc := range []struct{ text, want string }{
		{inner, `input "m" is given output "msg" of step make, which is not there when that step did not succeed: a step with trigger: completed then gives the input its default, and it has none`},
		{withDefault, `input "n": output "msg" of step make inside a text: a step with trigger: completed takes an output whole, into an input with a default`},
		{whole, `output "msg" of step make, read by resources.memory: a step with trigger: completed runs even when the steps it depends on did not succeed`},
	} {
		text := tc.text
		if err := os.WriteFile(filepath.Join(dir, "inner.pipeline.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		outer, err := pipeline.Parse(filepath.Join(dir, "pipeline.yaml"), []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: outer}
steps:
  - name: make
    component: {metadata: {name: make}, outputs: [{name: msg, type: string}], command: [make]}
  - name: stage
    component: inner.pipeline.yaml
    inputs: {x: "{{steps.make.outputs.msg}}"}
`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err = Build(outer, "stage.tidy"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("nested: err = %v, want %q", err, tc.want)
		}
	}
}
