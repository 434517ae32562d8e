package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// pipelineYAML has a producer and a consumer wired every way a step input
// can be: a param, a literal embedding a param, an upstream output
// parameter, an upstream artifact; plus env and a when.
const pipelineYAML = `
apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: demo}
params:
  epochs: {type: int, default: 3}
  tag: {type: string, default: "v1"}
steps:
  - name: prep
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: prep}
      outputs:
        - {name: data, type: Dataset}
        - {name: rows, type: int}
      image: example/prep:1
      command: [prep, "{{outputs.data.path}}", "{{outputs.rows.path}}"]
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      inputs:
        - {name: data, type: Dataset}
        - {name: epochs, type: int}
        - {name: name, type: string}
        - {name: rows, type: int}
        - {name: lr, type: float, default: 0.1}
      image: example/train:1
      command: [train, "{{inputs.data.path}}", "{{inputs.epochs}}", "{{inputs.name}}", "{{inputs.rows}}", "{{inputs.lr}}"]
    inputs:
      data: "{{steps.prep.outputs.data}}"
      epochs: "{{params.epochs}}"
      name: "model-{{params.tag}}-final"
      rows: "{{steps.prep.outputs.rows}}"
    env: [{name: TAG, value: "{{params.tag}}"}, {name: PLAIN, value: "x"}]
    when: "{{steps.prep.outputs.rows}} != 0"
    retries: 2
    timeout: 90s
    cache: false
    resources: {cpu: "2", gpu: 1}
    tolerations: [{key: team, operator: Equal, value: ml, effect: NoSchedule}]
`

func load(t *testing.T, yaml string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.Parse(t.TempDir()+"/pipeline.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildStep(t *testing.T) {
	got, err := Build(load(t, pipelineYAML), "train")
	if err != nil {
		t.Fatal(err)
	}
	lr := "0.1"
	two := resource.MustParse("2")
	one := resource.MustParse("1")
	want := &Step{
		Pipeline: "demo", Name: "train",
		Component: &components.Program{
			Version: components.ProgramVersion, Name: "train",
			Inputs: []components.ProgramIO{
				{Name: "data", Type: "Dataset"}, {Name: "epochs", Type: "int"}, {Name: "name", Type: "string"},
				{Name: "rows", Type: "int"}, {Name: "lr", Type: "float", Default: &lr},
			},
			Command: []string{"train", "{{inputs.data.path}}", "{{inputs.epochs}}", "{{inputs.name}}", "{{inputs.rows}}", "{{inputs.lr}}"},
			Dir:     got.Component.Dir,
		},
		Wiring: &Wiring{
			Version: wire.WiringVersion, Step: "train",
			Params: map[string]Text{
				"epochs": {{Param: "epochs"}},
				"name":   {{Lit: "model-"}, {Param: "tag"}, {Lit: "-final"}},
				"rows":   {{Upstream: "rows"}},
			},
			Inputs:   map[string]OutputRef{"data": {Step: "prep", Output: "data"}},
			Env:      []EnvText{{Name: "TAG", Value: Text{{Param: "tag"}}}, {Name: "PLAIN", Value: Text{{Lit: "x"}}}},
			Upstream: map[string]OutputRef{"rows": {Step: "prep", Output: "rows"}},
		},
		Deps:    []string{"prep"},
		When:    &Condition{Left: Operand{Output: &OutputRef{Step: "prep", Output: "rows"}}, Op: "!=", Right: Operand{Lit: "0"}, Type: "int", Source: "{{steps.prep.outputs.rows}} != 0"},
		Retries: 2, Timeout: pipeline.Duration{Duration: 90 * time.Second}, Cache: false, Image: "example/train:1",
		Pod: Pod{
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": two, "nvidia.com/gpu": one},
				Limits:   corev1.ResourceList{"cpu": two, "nvidia.com/gpu": one},
			},
			Tolerations: []corev1.Toleration{
				{Key: "team", Operator: "Equal", Value: "ml", Effect: "NoSchedule"},
				{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	if got.Component.Dir == "" {
		t.Error("the component's directory is not kept for local runs")
	}
	if diff := cmp.Diff([]string{"epochs", "tag"}, got.Wiring.ParamNames()); diff != "" {
		t.Errorf("ParamNames (-want +got):\n%s", diff)
	}
}

// distributedYAML is a one-step pipeline whose step has the given
// distributed block (and step-level fields).
func distributedYAML(step string) string {
	return `
apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: ddp}
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      image: example/train:1
      command: [python3, train.py]
` + step
}

func TestBuildDistributed(t *testing.T) {
	gpuTol := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name, step string
		want       Distributed
	}{{
		name: "defaults: one process per node, unbounded /dev/shm",
		step: "    distributed: {nodes: 2}\n",
		want: Distributed{Nodes: 2, ProcsPerNode: 1, LocalProcsPerNode: 1},
	}, {
		name: "GPUs: a process per GPU on Kubernetes (one locally), the GPU taint tolerated, /dev/shm half the memory",
		step: "    distributed: {nodes: 2, resources: {memory: 64Gi, gpu: 4}}\n",
		want: Distributed{Nodes: 2, ProcsPerNode: 4, LocalProcsPerNode: 1, ShmSize: "32Gi", Pod: Pod{
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"memory": resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("4")},
				Limits:   corev1.ResourceList{"memory": resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("4")},
			},
			Tolerations: []corev1.Toleration{gpuTol},
		}},
	}, {
		name: "procsPerNode and shmSize as written win; step-level resources shape the ranks",
		step: "    resources: {memory: 3Gi, gpu: 8}\n    distributed: {nodes: 1, procsPerNode: 2, shmSize: 1Gi, tolerations: [{operator: Exists}]}\n",
		want: Distributed{Nodes: 1, ProcsPerNode: 2, LocalProcsPerNode: 2, ShmSize: "1Gi", Pod: Pod{
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"memory": resource.MustParse("3Gi"), "nvidia.com/gpu": resource.MustParse("8")},
				Limits:   corev1.ResourceList{"memory": resource.MustParse("3Gi"), "nvidia.com/gpu": resource.MustParse("8")},
			},
			// A toleration of every taint covers the GPU's: none is added.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		}},
	}, {
		name: "gang, placement and timeouts",
		step: "    distributed:\n      nodes: 3\n      maxRestarts: 2\n      startupTimeout: 5m\n      stallTimeout: 90s\n      port: 29400\n      priorityClass: high\n" +
			"      nodeSelector: {pool: a100}\n      gang: {podGroup: {scheduler: volcano, timeout: 90s}}\n" +
			"      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname}]}}\n",
		want: Distributed{
			Nodes: 3, ProcsPerNode: 1, LocalProcsPerNode: 1, MaxRestarts: 2, StartupTimeout: pipeline.Duration{Duration: 5 * time.Minute},
			StallTimeout: pipeline.Duration{Duration: 90 * time.Second}, Port: 29400,
			Pod: Pod{
				NodeSelector: map[string]string{"pool": "a100"}, PriorityClassName: "high",
				Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}},
				}},
			},
			Gang: &Gang{PodGroupScheduler: "volcano", PodGroupTimeout: pipeline.Duration{Duration: 90 * time.Second}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Build(load(t, distributedYAML(tc.step)), "train")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, sp.Distributed); diff != "" {
				t.Errorf("Distributed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct{ step, want string }{
		{"    distributed: {nodes: 1, affinity: {nodeAffinity: {bogus: 1}}}\n", "distributed: distributed.affinity: not a Kubernetes affinity"},
	} {
		_, err := Build(load(t, distributedYAML(tc.step)), "train")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.step, err, tc.want)
		}
	}
	if _, err := Build(load(t, distributedYAML("")), "nope"); err == nil || !strings.Contains(err.Error(), `no step "nope"`) {
		t.Errorf("unknown step: %v", err)
	}
}

func TestWireRoundTrip(t *testing.T) {
	sp, err := Build(load(t, pipelineYAML), "train")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := wire.Encode(sp.Component)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := DecodeComponent(cs)
	if err != nil {
		t.Fatal(err)
	}
	want := *sp.Component
	want.Dir = "" // does not travel
	if diff := cmp.Diff(&want, comp); diff != "" {
		t.Errorf("component (-want +got):\n%s", diff)
	}
	ws, err := wire.Encode(sp.Wiring)
	if err != nil {
		t.Fatal(err)
	}
	w, err := DecodeWiring(ws)
	if err != nil {
		t.Fatal(err)
	}
	wantW := *sp.Wiring
	wantW.Upstream = nil // travels as --upstream values
	if diff := cmp.Diff(&wantW, w); diff != "" {
		t.Errorf("wiring (-want +got):\n%s", diff)
	}
	l := &Launch{Version: wire.LaunchVersion, Image: "i", Distributed: Distributed{Nodes: 2, ProcsPerNode: 4, ShmSize: "8Gi", StartupTimeout: pipeline.Duration{Duration: time.Minute}, StallTimeout: pipeline.Duration{Duration: 10 * time.Minute}}}
	ls, err := wire.Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeLaunch(ls)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, back); diff != "" {
		t.Errorf("launch (-want +got):\n%s", diff)
	}
	if _, err := DecodeLaunch(cs); err == nil || !strings.Contains(err.Error(), "spec version 1, this pipectl reads version 2") {
		t.Errorf("a spec of another version: %v", err)
	}
	// A component (v1) given as the step (v4) is refused by its version.
	if _, err := DecodeWiring(cs); err == nil || !strings.Contains(err.Error(), "spec version 1, this pipectl reads version 4") {
		t.Errorf("a component given as the step: %v", err)
	}
}

func TestInvocation(t *testing.T) {
	sp, err := Build(load(t, pipelineYAML), "train")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sp.Component.WithArgv(nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Values are inserted as they are and never parsed again.
	v := Values{Run: "r1", Params: map[string]string{"epochs": "3", "tag": "{{params.epochs}}"}, Upstream: map[string]string{"rows": "$(ROWS)"}}
	inv, err := sp.Wiring.Invocation(c, store, v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"epochs": "3", "name": "model-{{params.epochs}}-final", "rows": "$(ROWS)"}, inv.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"data": store.URI("r1/prep/data")}, inv.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TAG={{params.epochs}}", "PLAIN=x"}, inv.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	env := inv.Environ([]string{"HOME=/h"})
	if diff := cmp.Diff([]string{"HOME=/h", "TAG={{params.epochs}}", "PLAIN=x", "PIPECTL_RUN_ID=r1", "PIPECTL_STEP=train"}, env); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
	// A reused upstream step's artifact lives in an earlier run.
	v.Artifacts = map[string]string{"data": "file:///old/r0/prep/data"}
	if inv, err = sp.Wiring.Invocation(c, store, v); err != nil || inv.Inputs["data"] != "file:///old/r0/prep/data" {
		t.Errorf("input with a known URI: %v, %v", inv.Inputs, err)
	}
	delete(v.Upstream, "rows")
	if _, err := sp.Wiring.Invocation(c, store, v); err == nil || !strings.Contains(err.Error(), `want --upstream rows=VALUE`) {
		t.Errorf("missing upstream value: %v", err)
	}
	if _, err := sp.Component.WithArgv([]string{"sh", "{{inputs.nope}}"}); err == nil {
		t.Error("an argv naming an undeclared input was accepted")
	}
}

func TestConditionEval(t *testing.T) {
	out := func(r OutputRef) (string, error) { return map[string]string{"ok": " 1\n"}[r.Output], nil }
	for _, tc := range []struct {
		cond Condition
		want bool
	}{
		{Condition{Left: Operand{Param: "flag"}, Op: OpEqual, Right: Operand{Lit: "true"}, Type: "bool"}, true},
		{Condition{Left: Operand{Param: "flag"}, Op: OpEqual, Right: Operand{Lit: "true"}, Type: "string"}, false},
		{Condition{Left: Operand{Param: "mode"}, Op: OpNotEqual, Right: Operand{Lit: "fast"}, Type: "string"}, false},
		{Condition{Left: Operand{Output: &OutputRef{Step: "s", Output: "ok"}}, Op: OpEqual, Right: Operand{Lit: "true"}, Type: "bool"}, true},
		{Condition{Left: Operand{Param: "n"}, Op: OpGreater, Right: Operand{Lit: "5"}, Type: "int"}, true},
		{Condition{Left: Operand{Param: "n"}, Op: OpLessEqual, Right: Operand{Lit: "+007"}, Type: "int"}, true},
		{Condition{Left: Operand{Param: "n"}, Op: OpLess, Right: Operand{Lit: "7"}, Type: "int"}, false},
		{Condition{Left: Operand{Param: "x"}, Op: OpGreaterEqual, Right: Operand{Lit: "2.5e-1"}, Type: "float"}, true},
		{Condition{Left: Operand{Param: "x"}, Op: OpLess, Right: Operand{Lit: "0.25"}, Type: "float"}, false},
		// A && B: every comparison holds.
		{Condition{Left: Operand{Param: "n"}, Op: OpGreater, Right: Operand{Lit: "5"}, Type: "int", And: []Condition{{Left: Operand{Param: "mode"}, Op: OpEqual, Right: Operand{Lit: "fast"}, Type: "string"}}}, true},
		{Condition{Left: Operand{Param: "n"}, Op: OpGreater, Right: Operand{Lit: "5"}, Type: "int", And: []Condition{{Left: Operand{Param: "mode"}, Op: OpEqual, Right: Operand{Lit: "slow"}, Type: "string"}}}, false},
		{Condition{Left: Operand{Param: "n"}, Op: OpLess, Right: Operand{Lit: "5"}, Type: "int", And: []Condition{{Left: Operand{Param: "mode"}, Op: OpEqual, Right: Operand{Lit: "fast"}, Type: "string"}}}, false},
	} {
		got, err := tc.cond.Eval(Values{Params: map[string]string{"flag": "True", "mode": "fast", "n": " 7", "x": "0.25"}}, out)
		if err != nil || got != tc.want {
			t.Errorf("%+v = %v, %v; want %v", tc.cond, got, err, tc.want)
		}
	}
	if _, err := (&Condition{Left: Operand{Param: "x"}, Op: OpEqual}).Eval(Values{}, out); err == nil {
		t.Error("a parameter without a value compared")
	}
	// An int beyond 64 bits has no order here, as in Argo's int().
	big := &Condition{Left: Operand{Param: "n"}, Op: OpGreater, Right: Operand{Lit: "5"}, Type: "int"}
	if _, err := big.Eval(Values{Params: map[string]string{"n": "12345678901234567890"}}, out); err == nil || !strings.Contains(err.Error(), "64-bit int") {
		t.Errorf("an int beyond 64 bits compared in order: %v", err)
	}
}

// TestSameIteration: a step of a looped pipeline gets another's output of
// the same iteration as Wiring.Same (a value whole and inside a text, an
// artifact), which ResolveSame reads from that iteration's record.
func TestSameIteration(t *testing.T) {
	p := load(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: same}
steps:
  - name: each
    loop: {items: ["x", "y"]}
    inputs: {w: "{{item}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Pipeline
      metadata: {name: body}
      params: {w: {type: string}}
      steps:
        - name: a
          inputs: {w: "{{params.w}}"}
          component: {metadata: {name: a}, inputs: [{name: w, type: string}], outputs: [{name: v, type: string}, {name: d, type: Dataset}], command: [a]}
        - name: b
          inputs: {v: "{{steps.a.outputs.v}}", t: "<{{steps.a.outputs.v}}>", d: "{{steps.a.outputs.d}}"}
          component: {metadata: {name: b}, inputs: [{name: v, type: string}, {name: t, type: string}, {name: d, type: Dataset}], command: [b, "{{inputs.v}}", "{{inputs.t}}", "{{inputs.d.path}}"]}
`)
	sp, err := Build(p, "each.b")
	if err != nil {
		t.Fatal(err)
	}
	a := func(o string) OutputRef { return OutputRef{Step: "each.a", Output: o} }
	if diff := cmp.Diff(map[string]OutputRef{"v": a("v"), "t--1": a("v"), "d": a("d")}, sp.Wiring.Same); diff != "" {
		t.Errorf("Same (-want +got):\n%s", diff)
	}
	if len(sp.Wiring.Upstream) != 0 || len(sp.Wiring.Inputs) != 0 || len(sp.Wiring.Collected) != 0 {
		t.Errorf("the same iteration's outputs are in Same only: %+v", sp.Wiring)
	}
	val := func(s string) *string { return &s }
	records := map[OutputRef]record.OutputRecord{
		{Step: "each.a[1]", Output: "v"}: {Name: "v", Value: val("Y")},
		{Step: "each.a[1]", Output: "d"}: {Name: "d", URI: "file:///s/r/each.a[1]/d", SHA256: "abc"},
	}
	lookup := func(ref OutputRef) (record.OutputRecord, bool, error) {
		r, ok := records[ref]
		return r, ok, nil
	}
	one := 1
	v := Values{Run: "r", Iteration: &one}
	sums := map[string]string{}
	if err := sp.Wiring.ResolveSame(&v, sums, lookup); err != nil {
		t.Fatal(err)
	}
	inv, err := sp.Wiring.Invocation(sp.Component, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Step != "each.b[1]" || inv.Params["v"] != "Y" || inv.Params["t"] != "<Y>" || inv.Inputs["d"] != "file:///s/r/each.a[1]/d" || sums["d"] != "abc" {
		t.Errorf("iteration 1: step %s params %v inputs %v sums %v", inv.Step, inv.Params, inv.Inputs, sums)
	}
	zero := 0
	v = Values{Run: "r", Iteration: &zero}
	if err := sp.Wiring.ResolveSame(&v, map[string]string{}, lookup); err == nil || !strings.Contains(err.Error(), "step each.a[0] did not run") {
		t.Errorf("iteration 0, whose producer did not run: %v", err)
	}
	back, err := DecodeWiring(mustEncode(t, sp.Wiring))
	if err != nil || !cmp.Equal(back.Same, sp.Wiring.Same) {
		t.Errorf("the wire: %v, Same %v", err, back)
	}
}

// TestPerIterationWhen: a loop step's when comparing its item, or another
// step's output of the same iteration, is the wiring's (not the step's):
// SkipReason skips an iteration whose condition is false or whose
// same-iteration producer did not run.
func TestPerIterationWhen(t *testing.T) {
	p := load(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: per}
params:
  min: {type: int, default: 2}
steps:
  - name: each
    loop: {items: [{n: 1}, {n: 3}, {n: 5}]}
    inputs: {n: "{{item.n}}", min: "{{params.min}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Pipeline
      metadata: {name: body}
      params: {n: {type: int}, min: {type: int}}
      steps:
        - name: a
          inputs: {n: "{{params.n}}"}
          component: {metadata: {name: a}, inputs: [{name: n, type: int}], outputs: [{name: v, type: string}], command: [a]}
        - name: b
          when: "{{params.n}} >= {{params.min}} && {{steps.a.outputs.v}} != no"
          inputs: {v: "{{steps.a.outputs.v}}"}
          component: {metadata: {name: b}, inputs: [{name: v, type: string}], command: [b]}
`)
	sp, err := Build(p, "each.b")
	if err != nil {
		t.Fatal(err)
	}
	if sp.When != nil || sp.Wiring.When == nil || !sp.Wiring.When.PerIteration() || sp.Wiring.When.Type != components.TypeInt {
		t.Fatalf("when: step %+v, wiring %+v", sp.When, sp.Wiring.When)
	}
	if got := sp.Wiring.ParamNames(); !cmp.Equal(got, []string{"min"}) {
		t.Errorf("ParamNames = %v, want the when's param", got)
	}
	val := func(s string) *string { return &s }
	records := map[string]record.OutputRecord{"each.a[1]": {Name: "v", Value: val("no")}, "each.a[2]": {Name: "v", Value: val("yes")}}
	lookup := byStep(records)
	for i, want := range []string{
		"upstream step each.a[0] did not run",
		`condition "{{item.n}} >= {{params.min}} && {{steps.each.a.outputs.v}} != no" is false`,
		"",
	} {
		v := Values{Run: "r", Params: map[string]string{"min": "2"}, Iteration: &i}
		got, err := sp.Wiring.SkipReason(v, lookup)
		if err != nil || got != want {
			t.Errorf("iteration %d: SkipReason = %q, %v; want %q", i, got, err, want)
		}
	}
	// A plain step's when stays the step's.
	if sp, err := Build(p, "each.a"); err != nil || sp.When != nil || sp.Wiring.When != nil {
		t.Errorf("each.a: %v %+v", err, sp)
	}
}

// TestNestedLoopIterations: a loop step of a looped pipeline loops over
// the product of the pipeline's items and its own; iteration k reads the
// other steps' iteration of its outer item (k / the inner list's length),
// and an input given the first of the pipeline's steps that ran gets the
// same iteration's candidates (SameOneOf), the iteration skipped when none
// of them ran.
func TestNestedLoopIterations(t *testing.T) {
	p := load(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nest}
params:
  ws: {type: json, default: ["x", "y"]}
steps:
  - name: each
    loop: {items: "{{params.ws}}"}
    inputs: {w: "{{item}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Pipeline
      metadata: {name: body}
      params: {w: {type: string}}
      steps:
        - name: a
          inputs: {w: "{{params.w}}"}
          component: {metadata: {name: a}, inputs: [{name: w, type: string}], outputs: [{name: v, type: string}], command: [a]}
        - name: pick
          component:
            apiVersion: pipectl.dev/v1alpha1
            kind: Pipeline
            metadata: {name: pick}
            steps:
              - name: big
                when: "{{steps.c.outputs.v}} == big"
                component: {metadata: {name: big}, outputs: [{name: v, type: string}], command: [big]}
              - name: c
                component: {metadata: {name: c}, outputs: [{name: v, type: string}], command: [c]}
            outputs:
              v: {oneOf: ["{{steps.big.outputs.v}}", "{{steps.c.outputs.v}}"]}
        - name: l
          loop: {items: [1, 2, 3]}
          when: "{{steps.a.outputs.v}} != no"
          inputs: {n: "{{item}}", v: "{{steps.a.outputs.v}}", p: "{{steps.pick.outputs.v}}"}
          component: {metadata: {name: l}, inputs: [{name: n, type: int}, {name: v, type: string}, {name: p, type: string}], command: [l, "{{inputs.n}}", "{{inputs.v}}", "{{inputs.p}}"]}
`)
	sp, err := Build(p, "each.l")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Wiring.SameList != pipeline.NestOuter || len(sp.Wiring.SameOneOf["p"]) != 2 {
		t.Fatalf("wiring: SameList %q, SameOneOf %v", sp.Wiring.SameList, sp.Wiring.SameOneOf)
	}
	val := func(s string) *string { return &s }
	records := map[string]record.OutputRecord{
		"each.a[0]": {Name: "v", Value: val("A0")}, "each.a[1]": {Name: "v", Value: val("no")},
		"each.pick.c[0]": {Name: "v", Value: val("C0")}, "each.pick.big[1]": {Name: "v", Value: val("B1")},
	}
	lookup := byStep(records)
	params := map[string]string{"ws": `["x", "y"]`}
	for k, want := range []string{"", "", "", `condition "{{steps.each.a.outputs.v}} != no" is false`, `condition "{{steps.each.a.outputs.v}} != no" is false`, `condition "{{steps.each.a.outputs.v}} != no" is false`} {
		v := Values{Run: "r", Params: params, Iteration: &k}
		if got, err := sp.Wiring.SkipReason(v, lookup); err != nil || got != want {
			t.Errorf("iteration %d: SkipReason = %q, %v; want %q", k, got, err, want)
		}
	}
	two := 2
	v := Values{Run: "r", Params: params, Iteration: &two}
	if err := sp.Wiring.ResolveSame(&v, map[string]string{}, lookup); err != nil {
		t.Fatal(err)
	}
	inv, err := sp.Wiring.Invocation(sp.Component, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Step != "each.l[2]" || inv.Params["n"] != "3" || inv.Params["v"] != "A0" || inv.Params["p"] != "C0" {
		t.Errorf("iteration 2 (x, 3): step %s params %v", inv.Step, inv.Params)
	}
	// An iteration none of whose candidates ran is skipped.
	delete(records, "each.pick.big[1]")
	records["each.a[1]"] = record.OutputRecord{Name: "v", Value: val("A1")}
	four := 4
	if got, err := sp.Wiring.SkipReason(Values{Run: "r", Params: params, Iteration: &four}, lookup); err != nil || got != "none of upstream steps each.pick.big[1], each.pick.c[1] ran (the first of them that ran gives an input)" {
		t.Errorf("iteration 4: SkipReason = %q, %v", got, err)
	}
}

// TestNestedLoopOverOuterField: a loop step of a looped pipeline over a
// field of the outer item: the iterations are every (outer, inner) pair,
// an outer item with an empty list giving none, and iteration k reads the
// other steps' iteration of its own outer item.
func TestNestedLoopOverOuterField(t *testing.T) {
	p := load(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nest}
params:
  gs: {type: json, default: [{xs: [1, 2, 3]}, {xs: []}, {xs: [4]}]}
steps:
  - name: each
    loop: {items: "{{params.gs}}"}
    inputs: {xs: "{{item.xs}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Pipeline
      metadata: {name: body}
      params: {xs: {type: json}}
      steps:
        - name: a
          component: {metadata: {name: a}, outputs: [{name: v, type: string}], command: [a]}
        - name: l
          loop: {items: "{{params.xs}}"}
          inputs: {n: "{{item}}", v: "{{steps.a.outputs.v}}"}
          component: {metadata: {name: l}, inputs: [{name: n, type: int}, {name: v, type: string}], outputs: [{name: o, type: string}], command: [l]}
        - name: sum
          inputs: {os: "{{steps.l.outputs.o}}"}
          component: {metadata: {name: sum}, inputs: [{name: os, type: json}], command: [sum]}
`)
	// sum's iteration i collects l's iterations of outer item i.
	sum, err := Build(p, "each.sum")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sum.Wiring.CollectedOuter["os"]; !ok || sum.Wiring.Collected["os"].Step != "each.l" || len(sum.Wiring.Same) != 0 {
		t.Fatalf("each.sum's wiring: %+v", sum.Wiring)
	}
	gs := map[string]string{"gs": `[{"xs": [1, 2, 3]}, {"xs": []}, {"xs": [4]}]`}
	for i, want := range [][]int{{0, 1, 2}, {}, {3}} {
		its, all, err := sum.Wiring.CollectedIterations("os", Values{Params: gs, Iteration: &i})
		if err != nil || all || !cmp.Equal(its, want) {
			t.Errorf("outer iteration %d collects %v (all %v, %v), want %v", i, its, all, err, want)
		}
	}
	sp, err := Build(p, "each.l")
	if err != nil {
		t.Fatal(err)
	}
	val := func(s string) *string { return &s }
	records := map[string]record.OutputRecord{"each.a[0]": {Name: "v", Value: val("A0")}, "each.a[2]": {Name: "v", Value: val("A2")}}
	lookup := byStep(records)
	params := map[string]string{"gs": `[{"xs": [1, 2, 3]}, {"xs": []}, {"xs": [4]}]`}
	items, err := sp.Wiring.ItemList(Values{Params: params})
	if err != nil || len(items) != 4 {
		t.Fatalf("items %v, %v; want 4 pairs", items, err)
	}
	for k, want := range []string{"1/A0", "2/A0", "3/A0", "4/A2"} {
		v := Values{Run: "r", Params: params, Iteration: &k}
		if err := sp.Wiring.ResolveSame(&v, map[string]string{}, lookup); err != nil {
			t.Fatalf("iteration %d: %v", k, err)
		}
		inv, err := sp.Wiring.Invocation(sp.Component, nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if got := inv.Params["n"] + "/" + inv.Params["v"]; got != want {
			t.Errorf("iteration %d: %s, want %s", k, got, want)
		}
	}
}

// byStep looks an output up in records, by the step (or iteration) of the
// reference; a step without a record did not run.
func byStep(records map[string]record.OutputRecord) func(OutputRef) (record.OutputRecord, bool, error) {
	return func(ref OutputRef) (record.OutputRecord, bool, error) {
		r, ok := records[ref.Step]
		return r, ok, nil
	}
}
