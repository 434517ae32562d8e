package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
)

// TestMetadataFromSteps: the step outputs an artifact param's metadata
// embeds travel as upstream values of the steps reading it, the k-th
// distinct one (sorted by step and output) as NAME--metaK; the invocation
// fills them in as written, with the params, and says which is missing.
func TestMetadataFromSteps(t *testing.T) {
	p := load(t, `
apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: meta}
params:
  tag: {type: string, default: v1}
  data:
    type: Dataset
    metadata: {by: "{{steps.z.outputs.n}}-{{steps.a.outputs.s}}-{{params.tag}}", "{{steps.a.outputs.s}}": [1.0, "{{steps.z.outputs.n}}"]}
steps:
  - name: z
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: z}, outputs: [{name: n, type: int}], command: [z, "{{outputs.n.path}}"]}
  - name: a
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: a}, outputs: [{name: s, type: string}], command: [a, "{{outputs.s.path}}"]}
  - name: read
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: read}, inputs: [{name: d, type: Dataset}], command: [r, "{{inputs.d.path}}"]}
    inputs: {d: "{{params.data}}"}
`)
	sp, err := Build(p, "read")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]OutputRef{"d--meta1": {Step: "a", Output: "s"}, "d--meta2": {Step: "z", Output: "n"}}, sp.Wiring.Upstream); diff != "" {
		t.Errorf("upstream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "z"}, sp.Deps); diff != "" {
		t.Errorf("deps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"data", "tag"}, sp.Wiring.ParamNames()); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	c, err := sp.Component.WithArgv(nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := Values{Run: "r1", Params: map[string]string{"tag": "{{params.tag}}", "data": "file:///d"},
		Upstream: map[string]string{"d--meta1": `x "y" {{steps.a.outputs.s}}`, "d--meta2": "007"}}
	inv, err := sp.Wiring.Invocation(c, store, v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"by":"007-x \"y\" {{steps.a.outputs.s}}-{{params.tag}}","x \"y\" {{steps.a.outputs.s}}":[1.0,"007"]}`
	if got := string(inv.Metadata["d"]); got != want {
		t.Errorf("metadata\n got %s\nwant %s", got, want)
	}
	if !json.Valid(inv.Metadata["d"]) {
		t.Errorf("metadata %s is not JSON", inv.Metadata["d"])
	}
	delete(v.Upstream, "d--meta2")
	if _, err := sp.Wiring.Invocation(c, store, v); err == nil || !strings.Contains(err.Error(), `output "n" of step z`) || !strings.Contains(err.Error(), "--upstream d--meta2=VALUE") {
		t.Errorf("missing upstream value: %v", err)
	}
}
