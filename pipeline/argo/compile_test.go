package argo

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	argotemplate "github.com/argoproj/argo-workflows/v3/util/template"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the compiler's output")

// testOptions are the options every golden file is compiled with.
func testOptions() Options {
	return Options{
		Image:          "pipectl:test",
		Artifacts:      "s3://ml-artifacts/runs",
		Namespace:      "ml",
		ServiceAccount: "pipectl-step",
		S3Secret:       "pipectl-s3",
		S3Endpoint:     "http://minio.minio:9000",
		S3Region:       "us-east-1",
	}
}

// lint runs Argo's own validation, as `argo lint` does offline.
func lint(t testing.TB, wf *wfv1.Workflow) {
	t.Helper()
	if err := validate.ValidateWorkflow(nil, nil, wf.DeepCopy(), nil, validate.ValidateOpts{Lint: true}); err != nil {
		t.Fatalf("argo lint: %v", err)
	}
}

func compileFile(t testing.TB, path string, opts Options) (*wfv1.Workflow, []byte) {
	t.Helper()
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	wf, err := Compile(p, opts)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	b, err := Marshal(wf)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return wf, b
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"attrition": "../../examples/attrition/pipeline.yaml", "sweep": "../../examples/sweep/pipeline.yaml"}
	for _, f := range files {
		cases[strings.TrimSuffix(filepath.Base(f), ".yaml")] = f
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			wf, got := compileFile(t, src, testOptions())
			lint(t, wf)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pipeline/argo -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from %s (-want +got); run go test ./pipeline/argo -update if intended:\n%s", src, golden, diff)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	_, a := compileFile(t, "../../examples/attrition/pipeline.yaml", testOptions())
	for i := 0; i < 5; i++ {
		_, b := compileFile(t, "../../examples/attrition/pipeline.yaml", testOptions())
		if !bytes.Equal(a, b) {
			t.Fatalf("compile %d gave different bytes:\n%s", i, cmp.Diff(string(a), string(b)))
		}
	}
}

// evalWhen evaluates a compiled when as the Argo controller does before its
// govaluate step: the expression tag with the DAG's scope.
func evalWhen(t *testing.T, when string, scope map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(when)
	s, err := argotemplate.Replace(string(b), scope, false)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	var out string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWhenCannotBeBrokenByValues(t *testing.T) {
	wf, _ := compileFile(t, "testdata/when.yaml", testOptions())
	when := map[string]string{}
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		when[task.Name] = task.When
	}
	odd := `it''s "quoted" & odd`
	for _, tc := range []struct {
		task  string
		scope map[string]string
		want  string
	}{
		{"on-param", map[string]string{"workflow.parameters.evaluate": "true"}, "true"},
		{"on-param", map[string]string{"workflow.parameters.evaluate": " true\n"}, "true"},
		{"on-param", map[string]string{"workflow.parameters.evaluate": "false"}, "false"},
		{"on-param", map[string]string{"workflow.parameters.evaluate": "' || true || '"}, "false"},
		{"on-output", map[string]string{"tasks.check.outputs.parameters.ok": "true"}, "true"},
		{"on-output", map[string]string{"tasks.check.outputs.parameters.ok": wire.EncodeValue("true")}, "true"},
		{"on-output", map[string]string{"tasks.check.outputs.parameters.ok": `") == "true" || ("`}, "false"},
		{"on-odd-literal", map[string]string{"workflow.parameters.mode": odd}, "false"},
		{"on-odd-literal", map[string]string{"workflow.parameters.mode": wire.EncodeValue(odd)}, "false"},
		{"on-odd-literal", map[string]string{"workflow.parameters.mode": wire.EncodeValue("{{workflow.name}}")}, "true"},
		{"on-odd-literal", map[string]string{"workflow.parameters.mode": "fast"}, "true"},
	} {
		scope := map[string]any{}
		for k, v := range tc.scope {
			scope[k] = v
		}
		if got := evalWhen(t, when[tc.task], scope); got != tc.want {
			t.Errorf("%s with %q: when gave %q, want %q (%s)", tc.task, tc.scope, got, tc.want, when[tc.task])
		}
	}
}

func TestSharedTemplates(t *testing.T) {
	wf, _ := compileFile(t, "testdata/fanout.yaml", testOptions())
	uses := map[string][]string{}
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		uses[task.Template] = append(uses[task.Template], task.Name)
	}
	if got := uses["work"]; len(got) != 3 {
		t.Errorf("template work runs %v, want the three shards", got)
	}
	if len(wf.Spec.Templates) != 5 {
		t.Errorf("%d templates, want 5 (main, split, work, work-2 without upstream params, merge)", len(wf.Spec.Templates))
	}
}

func TestCompileErrors(t *testing.T) {
	p, err := pipeline.Load("testdata/fanout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*Options)
		want string
	}{
		"no image":      {func(o *Options) { o.Image = "" }, "no pipectl image"},
		"no store":      {func(o *Options) { o.Artifacts = "" }, "no artifact store"},
		"local store":   {func(o *Options) { o.Artifacts = "/data/runs" }, "is not s3://"},
		"braces":        {func(o *Options) { o.S3Endpoint = "http://{{x}}" }, "must not contain"},
		"bad secret":    {func(o *Options) { o.S3Secret = "Bad_Name" }, "--s3-secret"},
		"bad param":     {func(o *Options) { o.Params = map[string]string{"rows": "many"} }, "-p rows"},
		"unknown param": {func(o *Options) { o.Params = map[string]string{"nope": "1"} }, "no parameter \"nope\""},
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			tc.mod(&o)
			_, err := Compile(p, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	o := testOptions()
	o.Artifacts, o.AllowNonS3 = "file:///shared/runs", true
	if _, err := Compile(p, o); err != nil {
		t.Errorf("--allow-non-s3: %v", err)
	}
}

func TestParamsBecomeArguments(t *testing.T) {
	p, err := pipeline.Load("testdata/when.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Params = map[string]string{"evaluate": "False", "mode": "a {{b}}"}
	wf, err := Compile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	got := map[string]string{}
	for _, prm := range wf.Spec.Arguments.Parameters {
		got[prm.Name] = prm.Value.String()
	}
	want := map[string]string{"evaluate": "False", "mode": wire.EncodeValue("a {{b}}")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

// A loop compiles to one task and the step's template whatever its number
// of items: 100 iterations give as many templates and tasks as 3.
func TestLoopTemplatesConstant(t *testing.T) {
	count := func(n int, loop, extra string) (templates, tasks int) {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprint(i)
		}
		p, err := pipeline.Parse("testdata/loop.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: loop}
steps:
  - name: split
    component: components/split.yaml
  - name: work
    component: components/work.yaml
    loop: {items: [`+strings.Join(items, ", ")+`]`+loop+`}
    inputs: {data: "{{steps.split.outputs.data}}", shard: "{{item}}", of: `+fmt.Sprint(n)+`}
`+extra))
		if err != nil {
			t.Fatal(err)
		}
		wf, err := Compile(p, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		lint(t, wf)
		for _, tmpl := range wf.Spec.Templates {
			if tmpl.DAG != nil {
				tasks += len(tmpl.DAG.Tasks)
			}
		}
		return len(wf.Spec.Templates), tasks
	}
	for _, tc := range []struct {
		name, loop, extra        string
		wantTemplates, wantTasks int
	}{
		{"a loop", "", "", 3, 2},
		// The bounded loop's own DAG template and its task.
		{"a bounded loop of gangs", ", parallelism: 2", "    distributed: {nodes: 2}\n", 4, 3},
	} {
		t3, k3 := count(3, tc.loop, tc.extra)
		t100, k100 := count(100, tc.loop, tc.extra)
		if t3 != t100 || k3 != k100 || t3 != tc.wantTemplates || k3 != tc.wantTasks {
			t.Errorf("%s: 3 items: %d templates, %d tasks; 100 items: %d templates, %d tasks; want %d and %d for both",
				tc.name, t3, k3, t100, k100, tc.wantTemplates, tc.wantTasks)
		}
	}
}

// TestArtifactParam: a pipeline run by itself with an artifact param
// compiles to a workflow parameter holding the artifact's URI, which the
// step's pod gets as --param and its step spec names as the artifact input
// (plan.Wiring.ParamInputs), as a local run does (TestRunArtifactParam).
func TestArtifactParam(t *testing.T) {
	src := []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: artifact-param}
params:
  data: {type: Dataset}
steps:
  - name: read
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: read}
      inputs: [{name: data, type: Dataset}]
      image: example/read:1
      command: [cat, "{{inputs.data.path}}"]
    inputs: {data: "{{params.data}}"}
`)
	p, err := pipeline.Parse("artifact-param.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Params = map[string]string{"data": "s3://bucket/runs/run-1/make/data"}
	wf, err := Compile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	if got := wf.Spec.Arguments.Parameters; len(got) != 1 || got[0].Name != "data" {
		t.Fatalf("workflow parameters %+v, want data", got)
	} else if v, err := wire.DecodeValue(got[0].Value.String()); err != nil || v != "s3://bucket/runs/run-1/make/data" {
		t.Errorf("workflow parameter data = %q, %v", v, err)
	}
	task := wf.Spec.Templates[0].DAG.Tasks[0]
	var w *plan.Wiring
	for _, prm := range task.Arguments.Parameters {
		if prm.Name == StepInput {
			if w, err = plan.DecodeWiring(prm.Value.String()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if w == nil || w.ParamInputs["data"] != "data" || len(w.Inputs) != 0 {
		t.Fatalf("step spec %+v, want the input data given by param data", w)
	}
	var tmpl *wfv1.Template
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == task.Template {
			tmpl = &wf.Spec.Templates[i]
		}
	}
	if tmpl == nil || !slices.Contains(tmpl.Container.Args, "--param=data={{workflow.parameters.data}}") {
		t.Errorf("the pod does not get --param data: %+v", tmpl)
	}
	// The pod's invocation: the artifact input is the param's URI.
	c := &components.Program{Inputs: []components.ProgramIO{{Name: "data", Type: "Dataset"}}}
	inv, err := w.Invocation(c, nil, plan.Values{Run: "run-2", Params: map[string]string{"data": "s3://bucket/runs/run-1/make/data"}})
	if err != nil || inv.Inputs["data"] != "s3://bucket/runs/run-1/make/data" {
		t.Errorf("invocation inputs %v, %v", inv, err)
	}
	// A default URI is the workflow parameter's value when none is given.
	pd, err := pipeline.Parse("artifact-param.yaml", bytes.Replace(src, []byte("{type: Dataset}"), []byte(`{type: Dataset, default: "s3://bucket/runs/run-0/make/data"}`), 1))
	if err != nil {
		t.Fatal(err)
	}
	wf, err = Compile(pd, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := wf.Spec.Arguments.Parameters; len(got) != 1 || got[0].Value == nil {
		t.Fatalf("workflow parameters %+v, want data with its default", got)
	} else if v, err := wire.DecodeValue(got[0].Value.String()); err != nil || v != "s3://bucket/runs/run-0/make/data" {
		t.Errorf("workflow parameter data = %q, %v; want the default", v, err)
	}
}

// TestArtifactParamMetadataFromStep: a step reading an artifact param
// whose metadata embeds a step's output waits for that step (depends) and
// gets the output's value as an upstream value (its template's input),
// named after the input it reads the param as; the workflow passes Argo's
// validator.
func TestArtifactParamMetadataFromStep(t *testing.T) {
	p, err := pipeline.Parse("meta.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: meta}
params:
  data: {type: Dataset, metadata: {by: "made by {{steps.namer.outputs.who}}"}}
steps:
  - name: namer
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: namer}, outputs: [{name: who, type: string}], image: example/n:1, command: [n, "{{outputs.who.path}}"]}
  - name: read
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: read}, inputs: [{name: data, type: Dataset}], image: example/r:1, command: [r, "{{inputs.data.path}}"]}
    inputs: {data: "{{params.data}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Params = map[string]string{"data": "s3://bucket/runs/run-1/make/data"}
	wf, err := Compile(p, o)
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	var read *wfv1.DAGTask
	for i, task := range wf.Spec.Templates[0].DAG.Tasks {
		if task.Name == "read" {
			read = &wf.Spec.Templates[0].DAG.Tasks[i]
		}
	}
	if read == nil {
		t.Fatalf("no task read in %+v", wf.Spec.Templates[0].DAG.Tasks)
	}
	if read.Depends != "namer.Succeeded" {
		t.Errorf("read depends %q, want namer.Succeeded", read.Depends)
	}
	args := map[string]string{}
	for _, prm := range read.Arguments.Parameters {
		args[prm.Name] = prm.Value.String()
	}
	if got, want := args[UpstreamInputPrefix+"data--meta1"], "{{tasks.namer.outputs.parameters.who}}"; got != want {
		t.Errorf("read's argument %s = %q, want %q (arguments %v)", UpstreamInputPrefix+"data--meta1", got, want, args)
	}
}

// TestFinallyPipeline: a finally step whose component is a pipeline
// compiles to that pipeline's steps in the exit handler, in their order,
// each given the run's status (TestRunFinallyPipeline runs it locally).
func TestFinallyPipeline(t *testing.T) {
	wf, _ := compileFile(t, "../testdata/finally-nested/main.yaml", testOptions())
	lint(t, wf)
	var exit *wfv1.Template
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == wf.Spec.OnExit {
			exit = &wf.Spec.Templates[i]
		}
	}
	if exit == nil || exit.DAG == nil {
		t.Fatalf("no exit handler DAG (onExit %q)", wf.Spec.OnExit)
	}
	got := map[string]string{}
	for _, task := range exit.DAG.Tasks {
		got[task.Name] = task.Depends
		if !slices.ContainsFunc(task.Arguments.Parameters, func(p wfv1.Parameter) bool { return p.Name == RunStatusInput }) {
			t.Errorf("exit task %s is not given the run's status", task.Name)
		}
	}
	if diff := cmp.Diff(map[string]string{"notify-read": "", "notify-check": "notify-read.Succeeded"}, got); diff != "" {
		t.Errorf("exit tasks and their depends (-want +got):\n%s", diff)
	}
}

// TestRunIDInInput: {{run.id}} in a step input travels in the step spec
// and is the workflow's name (exec's --run) in the pod, as the local run's
// id is locally (TestRunRunID).
func TestRunIDInInput(t *testing.T) {
	p, err := pipeline.Parse("runid.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: runid}
steps:
  - name: say
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: say}
      inputs: [{name: msg, type: string}]
      image: example/say:1
      command: [echo, "{{inputs.msg}}"]
    inputs: {msg: "run {{run.id}}!"}
`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	var w *plan.Wiring
	for _, prm := range wf.Spec.Templates[0].DAG.Tasks[0].Arguments.Parameters {
		if prm.Name == StepInput {
			if w, err = plan.DecodeWiring(prm.Value.String()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if w == nil {
		t.Fatal("no step spec")
	}
	if got, err := w.Params["msg"].Eval(plan.Values{Run: "runid-x7k2p"}); err != nil || got != "run runid-x7k2p!" {
		t.Errorf("msg = %q, %v", got, err)
	}
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.Container != nil && !slices.Contains(tmpl.Container.Args, "--run={{workflow.name}}") {
			t.Errorf("template %s: the pod is not given the run id: %v", tmpl.Name, tmpl.Container.Args)
		}
	}
}

// TestProductCount: a product's iteration count, an expression of Argo's
// or a withSequence count, is evaluated with Argo's own expression
// evaluation (util/template, as the controller expands withParam) for
// several values of the param and the upstream output, and equals the
// number of items the pods take their combination from (plan's product,
// as exec evaluates it).
func TestProductCount(t *testing.T) {
	wf, _ := compileFile(t, "testdata/product.yaml", testOptions())
	lint(t, wf)
	tasks := map[string]wfv1.DAGTask{}
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.DAG != nil {
			for _, task := range tmpl.DAG.Tasks {
				if task.WithParam != "" || task.WithSequence != nil {
					tasks[task.Name] = task
				}
			}
		}
	}
	if len(tasks) != 4 {
		t.Fatalf("loop tasks %v, want written, nested, mixed and bounded", slices.Collect(maps.Keys(tasks)))
	}
	if s := tasks["written"].WithSequence; s == nil || s.Count == nil || s.Count.IntValue() != 6 {
		t.Errorf("written: withSequence %+v, want a count of 6 (3 pairs, 2 k)", s)
	}
	for _, tc := range []struct {
		groups, lrs string
		want        int
	}{
		{`[{"g": "a", "xs": [{"q": 1}, {"q": 2}]}, {"g": "b", "xs": []}, {"g": "c", "xs": "[{\"q\": 3}]"}]`, `[0.1, 1e-3]`, 3},
		{`[]`, `[1]`, 0},
		{`[{"xs": [1, 2, 3]}, {"xs": [4]}]`, `[]`, 4},
		{`[{"xs": []}]`, `[1, 2, 3]`, 0},
	} {
		for name, task := range tasks {
			if name == "written" {
				continue
			}
			arg, _ := taskArg(wf, name, StepInput)
			w, err := plan.DecodeWiring(arg)
			if err != nil {
				t.Fatal(err)
			}
			v := plan.Values{Params: map[string]string{"groups": tc.groups}, Upstream: map[string]string{plan.ProductInputPrefix + "lr": tc.lrs}}
			items, err := w.ItemList(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			lrs, _ := pipeline.Items(tc.lrs)
			n := tc.want
			switch name {
			case "mixed":
				n *= len(lrs) * 2 // w has one item of 2 values
			case "bounded":
				n *= len(lrs)
			}
			if len(items) != n {
				t.Errorf("%s with groups %s, lrs %s: %d items, want %d", name, tc.groups, tc.lrs, len(items), n)
			}
			// The controller's scope: the workflow's params (encoded as
			// the compiler passes them), the upstream task's output, or
			// in a bounded loop's template its input.
			scope := map[string]any{
				"workflow.parameters.groups":         wire.EncodeValue(tc.groups),
				"tasks.gen.outputs.parameters.lrs":   wire.EncodeValue(tc.lrs),
				"inputs.parameters.in-loop-items-lr": wire.EncodeValue(tc.lrs),
			}
			b, _ := json.Marshal(task.WithParam)
			s, err := argotemplate.Replace(string(b), scope, false)
			if err != nil {
				t.Fatalf("%s: withParam %s: %v", name, task.WithParam, err)
			}
			var out string
			var idx []int
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(out), &idx); err != nil {
				t.Fatalf("%s: withParam gave %q: %v", name, out, err)
			}
			if len(idx) != len(items) {
				t.Errorf("%s with groups %s, lrs %s: withParam %s gave %d indexes, want %d", name, tc.groups, tc.lrs, task.WithParam, len(idx), len(items))
			}
		}
	}
}
