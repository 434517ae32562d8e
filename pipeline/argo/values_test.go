package argo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

const probeComponent = `
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: probe}
      inputs: [{name: j, type: json}, {name: f, type: float}, {name: b, type: bool}, {name: d, type: json, default: {b: 2.0, a: 1}}]
      image: example/probe:1
      command: [probe, "{{inputs.j}}", "{{inputs.f}}", "{{inputs.b}}", "{{inputs.d}}"]
`

// TestWorkflowCarriesValuesAsWritten: the workflow arguments (defaults and
// -p) and a step's literals hold the text the user wrote.
func TestWorkflowCarriesValuesAsWritten(t *testing.T) {
	p, err := pipeline.Parse("values.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: values}
params:
  cfg: {type: json, default: {"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}}
  cfgText: {type: json, default: '{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}'}
  lr: {type: float, default: 1.0}
  flag: {type: bool, default: 'True'}
  n: {type: int}
steps:
  - name: probe`+probeComponent+`    inputs: {j: {z: 1.0, y: 12345678901234567890}, f: 1.0, b: True}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Params = map[string]string{"n": "007", "lr": "1.50"}
	wf, err := Compile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	got := map[string]string{}
	for _, prm := range wf.Spec.Arguments.Parameters {
		v, err := wire.DecodeValue(prm.Value.String())
		if err != nil {
			t.Fatal(err)
		}
		got[prm.Name] = v
	}
	want := map[string]string{
		"cfg":     `{"replicas":2,"x":1.0,"big":12345678901234567890,"a":[3,1]}`,
		"cfgText": `{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`,
		"lr":      "1.50",
		"flag":    "True",
		"n":       "007",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workflow arguments (-want +got):\n%s", diff)
	}
	var es *plan.Wiring
	for _, prm := range wf.Spec.Templates[0].DAG.Tasks[0].Arguments.Parameters {
		if prm.Name == StepInput {
			if es, err = plan.DecodeWiring(prm.Value.String()); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantLits := map[string]plan.Text{
		"j": {{Lit: `{"z":1.0,"y":12345678901234567890}`}},
		"f": {{Lit: "1.0"}},
		"b": {{Lit: "True"}},
	}
	if diff := cmp.Diff(wantLits, es.Params); diff != "" {
		t.Errorf("step literals (-want +got):\n%s", diff)
	}
}

// TestWhenComparesAsTypedOnBothBackends evaluates each condition the way a
// local run does (plan.Condition.Eval) and the way Argo does (the
// compiled expression) on the same values: both give the wanted answer.
func TestWhenComparesAsTypedOnBothBackends(t *testing.T) {
	type values map[string]string // params.X / steps.src.outputs.X -> text
	tests := []struct {
		when   string
		values values
		want   bool
	}{
		{"{{params.b}} == true", values{"b": "True"}, true},
		{"{{params.b}} == true", values{"b": "TRUE"}, true},
		{"{{params.b}} == true", values{"b": "0"}, false},
		{"{{params.b}} == False", values{"b": "false"}, true},
		{"{{params.b}}", values{"b": "t"}, true},
		{"{{params.b}} != 'true'", values{"b": " 1\n"}, false},
		{"{{params.i}} == 7", values{"i": "007"}, true},
		{"{{params.i}} == 7", values{"i": "+7"}, true},
		{"{{params.i}} == -7", values{"i": "-007"}, true},
		{"{{params.i}} == 0", values{"i": "-0"}, true},
		{"{{params.i}} == 70", values{"i": "7"}, false},
		{"{{params.i}} == 12345678901234567890", values{"i": "12345678901234567890"}, true},
		{"{{params.i}} == 12345678901234567890", values{"i": "12345678901234567891"}, false},
		{"{{params.f}} == 1.0", values{"f": "1"}, true},
		{"{{params.f}} == 0.1", values{"f": "1e-1"}, true},
		{"{{params.f}} != 0.5", values{"f": "0.50"}, false},
		{"{{params.f}} == 2", values{"f": "2.5"}, false},
		{"{{params.i}} == {{params.f}}", values{"i": "3", "f": "3.0"}, true},
		{`{{params.j}} == '{"a": 1, "b": [2.0]}'`, values{"j": `{"b":[2],"a":1.0}`}, true},
		{`{{params.j}} == '{"a": 1}'`, values{"j": `{"a":2}`}, false},
		{"{{params.s}} == fast", values{"s": " fast\n"}, true},
		{"{{params.s}} == 'True'", values{"s": "true"}, false},
		{"{{steps.src.outputs.ok}}", values{"ok": "True"}, true},
		{"{{steps.src.outputs.n}} == 10", values{"n": "010"}, true},
	}
	src := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: typed-when}
params:
  b: {type: bool}
  i: {type: int}
  f: {type: float}
  j: {type: json}
  s: {type: string}
steps:
  - name: src
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: src}
      outputs: [{name: ok, type: bool}, {name: n, type: int}]
      image: example/src:1
      command: [src, "{{outputs.ok.path}}", "{{outputs.n.path}}"]
`
	for i, tt := range tests {
		src += fmt.Sprintf("  - name: w%d\n    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: w}, image: w:1, command: [w]}\n    when: %q\n", i, tt.when)
	}
	p, err := pipeline.Parse("typed-when.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Params = map[string]string{"b": "true", "i": "1", "f": "1", "j": "1", "s": "x"}
	wf, err := Compile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	when := map[string]string{}
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		when[task.Name] = task.When
	}
	for i, tt := range tests {
		step := p.Step(fmt.Sprintf("w%d", i))
		sp, err := plan.Build(p, step.Name)
		if err != nil {
			t.Fatal(err)
		}
		local, err := sp.When.Eval(plan.Values{Params: tt.values}, func(ref plan.OutputRef) (string, error) { return tt.values[ref.Output], nil })
		if err != nil {
			t.Fatal(err)
		}
		scope := map[string]any{}
		for k, v := range tt.values {
			scope["workflow.parameters."+k] = wire.EncodeValue(v)
			scope["tasks.src.outputs.parameters."+k] = wire.EncodeValue(v)
		}
		argo := evalWhen(t, when[step.Name], scope)
		if local != tt.want || argo != fmt.Sprint(tt.want) {
			t.Errorf("%s with %q: local %v, Argo %s, want %v\n%s", tt.when, tt.values, local, argo, tt.want, when[step.Name])
		}
	}
}

// TestWhenLiteralMustFitTheType: a when literal compared with a typed
// reference is checked against the type when the pipeline loads.
func TestWhenLiteralMustFitTheType(t *testing.T) {
	_, err := pipeline.Parse("bad-when.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: bad-when}
params:
  b: {type: bool}
steps:
  - name: w
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: w}, image: w:1, command: [w]}
    when: "{{params.b}} == yes"
`))
	want := `bad-when.yaml:9:11: steps[0].when: cannot compare with "yes": expected true or false (bool), got "yes"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
