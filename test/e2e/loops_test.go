package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Loops, collected outputs and a finally step through the real Argo
// controller: a literal loop (withSequence), a loop over an upstream json
// output (withParam) with one failing iteration, a step collecting the
// first loop's outputs, and a finally step (onExit) reading the outcome.
func TestArgoLoopsAndFinally(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: loops}
steps:
  - name: gen
    component:
      metadata: {name: gen}
      image: e2e-shell:1
      outputs: [{name: items, type: json}]
      command: [sh, -c, 'printf "[\"ok\", \"fail\"]" > "$0"', "{{outputs.items.path}}"]
  - name: train
    loop: {items: [{lr: 0.10, name: a b}, {lr: 1e-3, name: c}], parallelism: 1}
    inputs: {lr: "{{item.lr}}", name: "{{item.name}}"}
    component:
      metadata: {name: train}
      image: e2e-shell:1
      inputs: [{name: lr, type: float}, {name: name, type: string}]
      outputs: [{name: model, type: Model}, {name: score, type: float}]
      command: [sh, -c, 'echo "train lr=$0 name=$1"; echo "model-$0" > "$2"; printf "%s" "$0" > "$3"', "{{inputs.lr}}", "{{inputs.name}}", "{{outputs.model.path}}", "{{outputs.score.path}}"]
  - name: again
    loop: {items: "{{steps.gen.outputs.items}}"}
    inputs: {what: "{{item}}"}
    component:
      metadata: {name: again}
      image: e2e-shell:1
      inputs: [{name: what, type: string}]
      command: [sh, -c, 'echo "again $0"; [ "$0" != fail ]', "{{inputs.what}}"]
  - name: pick
    inputs: {scores: "{{steps.train.outputs.score}}", models: "{{steps.train.outputs.model}}"}
    component:
      metadata: {name: pick}
      image: e2e-shell:1
      inputs: [{name: scores, type: json}, {name: models, type: Model}]
      command: [sh, -c, 'echo "scores=$0 m0=$(cat "$1/0") m1=$(cat "$1/1")"', "{{inputs.scores}}", "{{inputs.models.path}}"]
finally:
  - name: notify
    inputs: {status: "{{run.status}}", failed: "{{run.failedSteps}}"}
    component:
      metadata: {name: notify}
      image: e2e-shell:1
      inputs: [{name: status, type: string}, {name: failed, type: string}]
      command: [sh, -c, 'echo "status=$0 failed=$1"', "{{inputs.status}}", "{{inputs.failed}}"]
`)
	out, errOut, code := a.runArgo(ctx, file)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (iteration again[1] fails)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	m := runID.FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no run id in:\n%s", errOut)
	}
	run := m[1]
	js, _, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	var rec struct {
		Status string `json:"status"`
		Steps  []struct {
			Name    string          `json:"name"`
			Status  string          `json:"status"`
			Item    json.RawMessage `json:"item"`
			Outputs []struct {
				Name  string  `json:"name"`
				Value *string `json:"value"`
			} `json:"outputs"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 {
		t.Fatalf("runs get: %v (exit %d)\n%s", err, code, js)
	}
	var got []string
	for _, s := range rec.Steps {
		line := s.Name + " " + s.Status
		if len(s.Item) > 0 {
			var compact bytes.Buffer
			_ = json.Compact(&compact, s.Item)
			line += " " + compact.String()
		}
		for _, o := range s.Outputs {
			if o.Value != nil {
				line += " " + o.Name + "=" + *o.Value
			}
		}
		got = append(got, line)
	}
	want := []string{
		`gen Succeeded items=["ok", "fail"]`,
		`train Succeeded`,
		`train[0] Succeeded {"lr":0.10,"name":"a b"} score=0.10`,
		`train[1] Succeeded {"lr":1e-3,"name":"c"} score=1e-3`,
		`again Failed`,
		`again[0] Succeeded "ok"`,
		`again[1] Failed "fail"`,
		`pick Succeeded`,
		`notify Succeeded`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || rec.Status != "Failed" {
		t.Errorf("run %s: status %s, steps:\n%s\nwant:\n%s", run, rec.Status, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for step, want := range map[string]string{
		"train[1]": "train lr=1e-3 name=c",
		"pick":     "scores=[0.10,1e-3] m0=model-0.10 m1=model-1e-3",
		"notify":   `status=Failed failed=["again[1]"]`,
	} {
		logs, _, code := a.pipectl(ctx, "logs", run, step)
		if code != 0 || !strings.Contains(logs, want) {
			t.Errorf("pipectl logs %s %s = %q (exit %d), want %q", run, step, logs, code, want)
		}
	}
	model, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/train[1]/model")
	if code != 0 || model != "model-1e-3\n" {
		t.Errorf("artifacts cat %s/train[1]/model = %q (exit %d)", run, model, code)
	}
}
