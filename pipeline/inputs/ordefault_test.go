package inputs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

const orDefaultPipeline = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - name: make
    component:
      metadata: {name: make}
      image: x:1
      outputs: [{name: msg, type: string}, {name: data, type: Dataset}]
      command: [make, "{{outputs.msg.path}}", "{{outputs.data.path}}"]
  - name: cleanup
    trigger: completed
    component:
      metadata: {name: cleanup}
      image: x:1
      inputs: [{name: message, type: string, default: "fallback $(x)"}, {name: data, type: Dataset, optional: true}]
      command: [cleanup, "{{inputs.message}}", "{{inputs.data.path}}"]
    inputs: {message: "{{steps.make.outputs.msg}}", data: "{{steps.make.outputs.data}}"}
`

// TestInvocationOrDefault: in a pod, a step with trigger: completed gets
// the outputs of the step it depends on from that step's outputs record
// when there is one, and its inputs' defaults (an optional artifact none)
// when there is none, or the record says the step was skipped; its plan
// reaches the pod through the wire, and no output travels as an upstream
// value (Argo would have none of a failed step).
func TestInvocationOrDefault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(orDefaultPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := plan.Build(p, "cleanup")
	if err != nil {
		t.Fatal(err)
	}
	if !sp.AfterCompleted || len(sp.Wiring.Upstream) > 0 {
		t.Fatalf("plan: afterCompleted %v, upstream values %v; want true and none", sp.AfterCompleted, sp.Wiring.Upstream)
	}
	enc, err := wire.Encode(sp.Wiring)
	if err != nil {
		t.Fatal(err)
	}
	w, err := plan.DecodeWiring(enc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]plan.OutputRef{"message": {Step: "make", Output: "msg"}, "data": {Step: "make", Output: "data"}}
	if diff := cmp.Diff(want, w.OrDefault); diff != "" {
		t.Errorf("wiring orDefault through the wire (-want +got):\n%s", diff)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const run = "r1"
	invoke := func(label string) (params, inputs, sums map[string]string) {
		t.Helper()
		inv, sums, err := Invocation(ctx, store, sp.Component, w, plan.Values{Run: run})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		params, err = sp.Component.ParamValues(inv.Params)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		return params, inv.Inputs, sums
	}

	// make failed: no outputs record.
	params, inputs, _ := invoke("no record")
	if params["message"] != "fallback $(x)" || len(inputs) != 0 {
		t.Errorf("no record: message %q, inputs %v; want the default and none", params["message"], inputs)
	}

	// make was skipped: its record says so.
	if err := recordstore.WriteStepOutputs(ctx, store, record.StepOutputs{Run: run, Step: "make", Skipped: "condition false"}); err != nil {
		t.Fatal(err)
	}
	params, inputs, _ = invoke("skipped")
	if params["message"] != "fallback $(x)" || len(inputs) != 0 {
		t.Errorf("skipped: message %q, inputs %v; want the default and none", params["message"], inputs)
	}

	// make succeeded: its outputs, as written.
	uri := store.URI(record.OutputKey(run, "make", "data"))
	msg := "made {{x}} $(y)"
	if err := recordstore.WriteStepOutputs(ctx, store, record.StepOutputs{Run: run, Step: "make", Outputs: []record.OutputRecord{
		{Name: "msg", Type: "string", Value: &msg}, {Name: "data", Type: "Dataset", URI: uri, SHA256: "abc"},
	}}); err != nil {
		t.Fatal(err)
	}
	params, inputs, sums := invoke("succeeded")
	if params["message"] != msg || inputs["data"] != uri || sums["data"] != "abc" {
		t.Errorf("succeeded: message %q, inputs %v, sums %v; want %q and data %s (abc)", params["message"], inputs, sums, msg, uri)
	}
}
