package pipeline

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/yamlfile"
)

// TestKFPv2Wiring loads a KFP v2 pipeline file as a pipeline: tasks are
// steps (a sub-DAG's tasks nested as WRAPPER.TASK), inputs are pipeline
// inputs, constants as written and task outputs, dependentTasks are after,
// placeholders are pipectl's.
func TestKFPv2Wiring(t *testing.T) {
	p, err := Load("testdata/kfpv2/wiring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Metadata.Name != "kfp-wiring" {
		t.Errorf("name %q, want kfp-wiring", p.Metadata.Name)
	}
	if got, want := strings.Join(p.ParamOrder, ","), "greeting,times"; got != want {
		t.Errorf("params %s, want %s", got, want)
	}
	got := map[string]map[string]Binding{}
	for _, s := range p.Steps {
		got[s.Name+"="+s.Resolved.Metadata.Name] = s.Bindings()
	}
	want := map[string]map[string]Binding{
		"produce=produce": {"greeting": {Param: "greeting"}, "times": {Param: "times"}},
		"for-loop-1=tag":  {"greeting": {Param: "greeting"}, "name": {Literal: "{{item.a}}"}},
		"join=join":       {"tags": {Step: "for-loop-1", Output: "tagged"}},
		"wrapped.consume=consume": {
			"data":   {Step: "produce", Output: "data"},
			"count":  {Step: "produce", Output: "count"},
			"ratio":  {Literal: "1.0"},
			"config": {Literal: `{"a":[1,2.50]}`},
			"suffix": {Literal: "!"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps and their inputs (-want +got):\n%s", diff)
	}
	prod, cons := p.Step("produce"), p.Step("wrapped.consume")
	if prod.CacheEnabled() || !cons.CacheEnabled() {
		t.Errorf("cache: produce %v (cachingOptions: {}), consume %v (enableCache: true)", prod.CacheEnabled(), cons.CacheEnabled())
	}
	if got, want := cons.When, "{{steps.produce.outputs.count}} == 3"; got != want {
		t.Errorf("consume when %q, want %q (the sub-DAG task's condition)", got, want)
	}
	if l := p.Step("for-loop-1").Loop; l == nil || l.Parallelism != 1 {
		t.Errorf("for-loop-1 loop %+v, want parallelism 1", l)
	} else if b, err := p.Step("for-loop-1").ItemsBinding(); err != nil || b.Literal != `[{"a":"x"},{"a":"y"}]` {
		t.Errorf("for-loop-1 items %+v, %v", b, err)
	}
	if prod.Retries != 2 {
		t.Errorf("produce retries %d, want 2", prod.Retries)
	}
	if got, want := cons.Resolved.Args, []string{"--count={{inputs.count}}", "--ratio", "{{inputs.ratio}}", "{{inputs.config}}",
		"{{if present inputs.suffix}}", "--suffix", "{{inputs.suffix}}", "{{else}}", "--no-suffix", "{{end}}",
		"{{inputs.data.path}}", "{{outputs.summary.path}}"}; !cmp.Equal(got, want) {
		t.Errorf("consume args (-want +got):\n%s", cmp.Diff(want, got))
	}
	if got := cons.Resolved.Env; len(got) != 1 || got[0].Value != "{{run.id}}" {
		t.Errorf("consume env %v, want RUN={{run.id}}", got)
	}
	for name, want := range map[string]Binding{"count": {Step: "produce", Output: "count"}, "summary": {Step: "wrapped.consume", Output: "summary"}} {
		if b, ok := p.Output(name); !ok || b != want {
			t.Errorf("output %s: %+v, want %+v", name, b, want)
		}
	}
}

// TestKFPv2Unsupported: what pipectl does not run is an error at its line
// and column, in KFP's terms.
func TestKFPv2Unsupported(t *testing.T) {
	_, err := Load("testdata/kfpv2/unsupported.yaml")
	if err == nil {
		t.Fatal("loaded")
	}
	const f = "testdata/kfpv2/unsupported.yaml"
	for _, want := range []string{
		f + ":14:11: deploymentSpec.executors.exec-echo.container.command[1]: placeholder {{$.pipeline_root}} is not supported",
		f + `:30:22: root.dag.tasks.echo.triggerPolicy.condition: condition "inputs.parameter_values['x'] == 'y'": the task has no input parameter "x" given by a pipeline input or a task output`,
		f + `:58:11: platforms.kubernetes.deploymentSpec.executors.exec-echo.secretAsVolume: KFP kubernetes platform spec "secretAsVolume" is not supported (executor exec-echo): pipectl gives a step's program a Secret's keys as variables only`,
		f + `:33:17: root.dag.tasks.other.componentRef.name: unknown component "comp-missing" (components: comp-echo)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestKFPv2StructConstantChannels: a pipeline channel inside a list or
// struct constant (google-cloud-pipeline-components' worker_pool_specs) is
// its value inside the constant's JSON text, key order and scalars as
// written.
func TestKFPv2StructConstantChannels(t *testing.T) {
	p, err := Load("testdata/kfpv2/unsupported.yaml")
	if err == nil {
		t.Fatal("loaded")
	}
	data, err := os.ReadFile("testdata/kfpv2/unsupported.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The file's other tasks are errors: keep the spec task only.
	text := string(data)
	text = text[:strings.Index(text, "      echo:\n")] + text[strings.Index(text, "      spec:\n"):strings.Index(text, "---")]
	text = strings.Replace(text, " {{$.pipeline_root}}", "", 1)
	if p, err = Parse("spec.yaml", []byte(text)); err != nil {
		t.Fatal(err)
	}
	want := map[string]Binding{"msg": {Literal: `{"machine":{"count":"{{params.n}}","kind":[1.0,"a b"]}}`}}
	if diff := cmp.Diff(want, p.Step("spec").Bindings()); diff != "" {
		t.Errorf("bindings of spec (-want +got):\n%s", diff)
	}
}

// TestKFPv2Platform: container resources and the kubernetes platform
// spec's tolerations, node selector and secretAsEnv become the fields of
// the steps running the executor.
func TestKFPv2Platform(t *testing.T) {
	p, err := Load("testdata/kfpv2/platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("train")
	want := &Resources{CPU: "2000m", Memory: "0.5G", GPU: "2", GPUResource: "amd.com/gpu"}
	if diff := cmp.Diff(want, s.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Toleration{{Key: "amd.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}, s.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pool": "gpu"}, s.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	// secretAsEnv: one secret per keyToEnv item; the Secret named by
	// secretName, a constant secretNameParameter (over secretName), a
	// pipeline input (its param) or a task's output.
	wantSecrets := []Secret{
		{Env: "HF_TOKEN", Secret: "hf", Key: "token"},
		{Env: "DB_USER", Secret: "{{params.db_secret}}", Key: "user"},
		{Env: "DB_PASSWORD", Secret: "{{params.db_secret}}", Key: "password"},
		{Env: "EXTRA", Secret: "extra-creds", Key: "extra", Optional: true},
		{Env: "API_KEY", Secret: "{{steps.namer.outputs.n}}", Key: "key"},
	}
	if diff := cmp.Diff(wantSecrets, s.Secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if !slices.Contains(s.Deps(), "namer") {
		t.Errorf("train depends on %v, want namer (its output names a Secret)", s.Deps())
	}
}

// TestKFPv2SecretsUnsupported: a secretAsEnv entry missing what it needs
// is refused at its line, in KFP's terms.
func TestKFPv2SecretsUnsupported(t *testing.T) {
	const f = "testdata/kfpv2/secrets_unsupported.yaml"
	_, err := Load(f)
	for _, want := range []string{
		f + `:57:17: platforms.kubernetes.deploymentSpec.executors.exec-train.secretAsEnv[0].secretNameParameter.taskOutputParameter: missing: producerTask and outputParameterKey`,
		f + `:58:13: platforms.kubernetes.deploymentSpec.executors.exec-train.secretAsEnv[1].keyToEnv: missing: keyToEnv`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestKFPv2Loops: each task of a ParallelFor body is a loop step of its
// own over the iterator's items (named LOOP-TASK), a body task after
// another waits for its loop, the loop's collected output is the body
// task's, and a ParallelFor in a ParallelFor over lists in the file loops
// over their product.
func TestKFPv2Loops(t *testing.T) {
	p, err := Load("testdata/kfpv2/loops.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type stepWant struct {
		inputs map[string]Binding
		after  []string
		items  string
		par    int
	}
	want := map[string]stepWant{
		"make-list":       {inputs: map[string]Binding{}},
		"for-loop-1-show": {inputs: map[string]Binding{"text": {Literal: "{{item.w}}"}}, after: []string{"make-list"}, items: "{{steps.make-list.outputs.Output}}", par: 2},
		"for-loop-1-mark": {inputs: map[string]Binding{"n": {Literal: "{{item.n}}"}}, after: []string{"for-loop-1-show", "make-list"}, items: "{{steps.make-list.outputs.Output}}", par: 2},
		"gather":          {inputs: map[string]Binding{"marks": {Step: "for-loop-1-mark", Output: "Output"}}, after: []string{"for-loop-1-mark", "for-loop-1-show"}},
		"for-loop-2-for-loop-3-pair": {inputs: map[string]Binding{"x": {Literal: "{{item.l0}}"}, "y": {Literal: "{{item.l1}}"}},
			items: `[{"l0":1,"l1":"a"},{"l0":1,"l1":"b"},{"l0":2,"l1":"a"},{"l0":2,"l1":"b"}]`},
		"for-loop-2-note": {inputs: map[string]Binding{"x": {Literal: "{{item}}"}}, after: []string{"for-loop-2-for-loop-3-pair"}, items: "[1,2]"},
		"done":            {inputs: map[string]Binding{"x": {Literal: "0"}}, after: []string{"for-loop-2-for-loop-3-pair", "for-loop-2-note"}},
	}
	got := map[string]stepWant{}
	for _, s := range p.Steps {
		w := stepWant{inputs: s.Bindings(), after: s.After}
		if s.Loop != nil {
			b, err := s.ItemsBinding()
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			w.items, w.par = b.Literal, s.Loop.Parallelism
			if b.Step != "" {
				w.items = "{{steps." + b.Step + ".outputs." + b.Output + "}}"
			}
		}
		got[s.Name] = w
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(stepWant{})); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// TestKFPv2LoopPipeline: a ParallelFor whose body has a task reading
// another's output and a sub-DAG task is one loop step whose component is
// the body's pipeline: its steps loop over the items, read each other's
// outputs iteration by iteration (Body), and the step's output is the
// body's, collected.
func TestKFPv2LoopPipeline(t *testing.T) {
	p, err := Load("testdata/kfpv2/loops_pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type stepWant struct {
		inputs      map[string]Binding
		items, body string
		par         int
	}
	want := map[string]stepWant{
		"for-loop-1.first":      {inputs: map[string]Binding{"msg": {Literal: "{{item}}"}}, items: `["a","b c"]`, body: "for-loop-1", par: 1},
		"for-loop-1.second":     {inputs: map[string]Binding{"msg": {Step: "for-loop-1.first", Output: "Output"}}, items: `["a","b c"]`, body: "for-loop-1", par: 1},
		"for-loop-1.inner.echo": {inputs: map[string]Binding{"msg": {Step: "for-loop-1.second", Output: "Output"}}, items: `["a","b c"]`, body: "for-loop-1", par: 1},
		"gather":                {inputs: map[string]Binding{"msgs": {Step: "for-loop-1.second", Output: "Output"}}},
	}
	got := map[string]stepWant{}
	for _, s := range p.Steps {
		w := stepWant{inputs: s.Bindings(), body: s.Body}
		if s.Loop != nil {
			b, err := s.ItemsBinding()
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			w.items, w.par = b.Literal, s.Loop.Parallelism
		}
		got[s.Name] = w
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(stepWant{})); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// TestKFPv2LoopProduct: a ParallelFor over a pipeline input holding one
// over a list in the file is a loop over their product (loop.product,
// evaluated at run time), the outer item {{item.l0}}, the inner {{item.l1}}.
func TestKFPv2LoopProduct(t *testing.T) {
	p, err := Load("testdata/kfpv2/loops_product.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("for-loop-1-for-loop-2-echo")
	if s == nil || s.Loop == nil {
		t.Fatalf("no loop step for-loop-1-for-loop-2-echo: %v", p.Steps)
	}
	lists, err := s.ProductLists()
	if err != nil {
		t.Fatal(err)
	}
	want := []ProductList{{Name: "l0", Binding: Binding{Param: "xs"}}, {Name: "l1", Binding: Binding{Literal: "[1,2]"}}}
	if diff := cmp.Diff(want, lists); diff != "" {
		t.Errorf("product (-want +got):\n%s", diff)
	}
	if b := s.Bindings(); b["msg"].Literal != "{{item.l0}}" || b["n"].Literal != "{{item.l1}}" {
		t.Errorf("inputs %+v, want the outer item l0 and the inner l1", b)
	}
	// The inner task's outputs, collected through both bodies: the loop
	// step's, one list over the product (KFP's driver collects them so).
	if b := p.Step("join").Bindings()["msg"]; b.Step != "for-loop-1-for-loop-2-echo" || b.Output != "Output" {
		t.Errorf("join's msg %+v, want output Output of for-loop-1-for-loop-2-echo", b)
	}
}

// TestKFPv2LoopNested: a ParallelFor in a ParallelFor whose items are a
// field of the outer item (KFP's "-subvar-" input with a
// parameterExpressionSelector), the outer item itself, or whose outer
// items are a task's output, loops over their product, the inner list
// {{item.l0.FIELD}} or {{item.l0}}.
func TestKFPv2LoopNested(t *testing.T) {
	p, err := Load("testdata/kfpv2/loops_nested.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		step   string
		want   []ProductList
		inputs map[string]string
	}{
		{"for-loop-1-for-loop-2-print-op",
			[]ProductList{{Name: "l0", Binding: Binding{Param: "loop_parameter"}}, {Name: "l1", Binding: Binding{Item: true, Field: "l0.p_a"}}},
			map[string]string{"msg": "{{item.l1.q_a}}", "msg2": "{{item.l0.p_b}}"}},
		{"for-loop-3-for-loop-4-print-op-2",
			[]ProductList{{Name: "l0", Binding: Binding{Step: "make-list", Output: "Output"}}, {Name: "l1", Binding: Binding{Literal: `["100","200"]`}}},
			map[string]string{"msg": "{{item.l0}}", "msg2": "{{item.l1}}"}},
		{"for-loop-5-for-loop-6-print-op-3",
			[]ProductList{{Name: "l0", Binding: Binding{Literal: `[["a"],[],["b","c"]]`}}, {Name: "l1", Binding: Binding{Item: true, Field: "l0"}}},
			map[string]string{"msg": "{{item.l1}}", "msg2": "-"}},
	} {
		s := p.Step(tc.step)
		if s == nil || s.Loop == nil {
			t.Fatalf("no loop step %s: %v", tc.step, p.Steps)
		}
		lists, err := s.ProductLists()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, lists); diff != "" {
			t.Errorf("%s: product (-want +got):\n%s", tc.step, diff)
		}
		got := map[string]string{}
		for name, b := range s.Bindings() {
			got[name] = b.Literal
		}
		if diff := cmp.Diff(tc.inputs, got); diff != "" {
			t.Errorf("%s: inputs (-want +got):\n%s", tc.step, diff)
		}
	}
}

// TestKFPv2LoopInBody: a ParallelFor whose body holds a task and a
// ParallelFor reading that task's output is one loop step over the body
// as a pipeline, whose own loop step loops over the product and reads the
// task's output of its outer iteration.
func TestKFPv2LoopInBody(t *testing.T) {
	p, err := Load("testdata/kfpv2/loops_in_body.yaml")
	if err != nil {
		t.Fatal(err)
	}
	use := p.Step("for-loop-1.for-loop-2")
	if use == nil || !use.Nested || use.Body != "for-loop-1" || !use.SameIteration(p.Step("for-loop-1.lead")) {
		t.Fatalf("for-loop-1.for-loop-2: %+v, want a nested loop step of for-loop-1's body", use)
	}
	if b := use.Bindings()["msg"]; b.Literal != "{{steps.for-loop-1.lead.outputs.Output}}/{{item.inner}}" {
		t.Errorf("use's msg %+v", b)
	}
}

// TestKFPv2LoopsUnsupported: an output a ParallelFor does not have is
// refused at its line and column in KFP's terms.
func TestKFPv2LoopsUnsupported(t *testing.T) {
	_, err := Load("testdata/kfpv2/loops_unsupported.yaml")
	if err == nil {
		t.Fatal("loaded")
	}
	const f = "testdata/kfpv2/loops_unsupported.yaml"
	for _, want := range []string{
		f + `:93:31: root.dag.tasks.for-loop-5.inputs.parameters.pipelinechannel--x.taskOutputParameter.producerTask: the ParallelFor "for-loop-1" has no output parameter "nope"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// The body of a ParallelFor whose inputs failed is not converted: it
	// would only say they are missing.
	if strings.Contains(err.Error(), "has no input") {
		t.Errorf("error reports the body's inputs missing:\n%v", err)
	}
}

// TestKFPv2OptionalSubDAGInput: a sub-DAG's optional input without a
// default that no task gives is left out, and the inner task's input it
// feeds gets no value; one a task gives is the param it was.
func TestKFPv2OptionalSubDAGInput(t *testing.T) {
	p, err := Load("testdata/kfpv2/optional.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("inner.show")
	if s == nil {
		t.Fatalf("no step inner.show: %v", p.Steps)
	}
	if diff := cmp.Diff(map[string]Binding{"name": {Literal: "x"}}, s.Bindings()); diff != "" {
		t.Errorf("inner.show inputs (-want +got):\n%s", diff)
	}
}

// TestKFPv2LoopsRecursive: a ParallelFor body holding a ParallelFor over
// itself is an error at the inner task's componentRef.
func TestKFPv2LoopsRecursive(t *testing.T) {
	_, err := Load("testdata/kfpv2/loops_recursive.yaml")
	want := `testdata/kfpv2/loops_recursive.yaml:10:19: components.comp-for-loop-1.dag.tasks.for-loop-2.componentRef.name: component "comp-for-loop-1" uses itself`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// TestKFPv2FinalStatusInput: a component with a PipelineTaskFinalStatus
// input compiled as a pipeline (GH-12033) has it as a pipeline input, a
// json param the run gives (KFP's optional pipeline inputs without a
// default are params without one); one that is not optional is refused.
func TestKFPv2FinalStatusInput(t *testing.T) {
	file := func(optional string) []byte {
		return []byte(`components:
  comp-exit:
    executorLabel: exec-exit
    inputDefinitions:
      parameters:
        status:
          isOptional: true
          parameterType: TASK_FINAL_STATUS
deploymentSpec:
  executors:
    exec-exit:
      container:
        command: [echo, '{"IfPresent": {"InputName": "status", "Then": ["{{$.inputs.parameters[''status'']}}"]}}']
        image: busybox
pipelineInfo:
  name: exit-comp
root:
  dag:
    tasks:
      exit:
        componentRef:
          name: comp-exit
        inputs:
          parameters:
            status:
              componentInputParameter: status
  inputDefinitions:
    parameters:
      status:
        isOptional: ` + optional + `
        parameterType: TASK_FINAL_STATUS
schemaVersion: 2.1.0
`)
	}
	p, err := Parse("status.yaml", file("true"))
	if err != nil {
		t.Fatal(err)
	}
	if prm := p.Params["status"]; prm.Type != "json" || prm.Default.Kind != 0 {
		t.Errorf("param status = %+v, want an optional json param", prm)
	}
	if _, err := p.ResolveParams(map[string]string{"status": `{"state": "FAILED"}`}); err != nil {
		t.Errorf("a run giving status: %v", err)
	}
	_, err = Parse("status.yaml", file("false"))
	want := `status.yaml:31:24: root.inputDefinitions.parameters.status.parameterType: KFP parameterType TASK_FINAL_STATUS (dsl.PipelineTaskFinalStatus) is the input of a component, or an optional pipeline input`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse: %v\nwant an error containing %q", err, want)
	}
}

// TestKFPv2CreatePVC: kfp-kubernetes' CreatePVC task (a container without
// a command, which KFP's driver runs) is refused as a volume, at its image.
func TestKFPv2CreatePVC(t *testing.T) {
	_, err := Parse("pvc.yaml", []byte(`components:
  comp-createpvc:
    executorLabel: exec-createpvc
deploymentSpec:
  executors:
    exec-createpvc:
      container:
        image: argostub/createpvc
pipelineInfo:
  name: pvc
root:
  dag:
    tasks:
      createpvc:
        componentRef:
          name: comp-createpvc
schemaVersion: 2.1.0
`))
	want := `pvc.yaml:8:16: deploymentSpec.executors.exec-createpvc.container.image: KFP argostub/createpvc (kubernetes.CreatePVC, DeletePVC) is not supported: pipectl has no volumes`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse: %v\nwant an error containing %q", err, want)
	}
}

// TestKFPv2InputArtifact: a pipeline input artifact is an artifact param,
// which the run gives as the URI of an artifact in the store.
func TestKFPv2InputArtifact(t *testing.T) {
	p, err := Parse("input.yaml", []byte(`components:
  comp-read:
    executorLabel: exec-read
    inputDefinitions:
      artifacts:
        data:
          artifactType:
            schemaTitle: system.Dataset
            schemaVersion: 0.0.1
deploymentSpec:
  executors:
    exec-read:
      container:
        command: [cat, '{{$.inputs.artifacts[''data''].path}}']
        image: busybox
pipelineInfo:
  name: input-artifact
root:
  dag:
    tasks:
      read:
        componentRef:
          name: comp-read
        inputs:
          artifacts:
            data:
              componentInputArtifact: data
  inputDefinitions:
    artifacts:
      data:
        artifactType:
          schemaTitle: system.Dataset
          schemaVersion: 0.0.1
        description: The data.
schemaVersion: 2.1.0
`))
	if err != nil {
		t.Fatal(err)
	}
	if prm := p.Params["data"]; prm.Type != "Dataset" || prm.Description != "The data." {
		t.Errorf("param data = %+v, want a Dataset param", prm)
	}
	if diff := cmp.Diff(map[string]Binding{"data": {Param: "data"}}, p.Step("read").Bindings()); diff != "" {
		t.Errorf("bindings of read (-want +got):\n%s", diff)
	}
	if _, err := p.ResolveParams(map[string]string{"data": "file:///store/run-1/make/data"}); err != nil {
		t.Errorf("ResolveParams: %v", err)
	}
}

// TestKFPv2RunPlaceholders: the run's placeholders in a task's constant
// are the run id ({{run.id}}) and the task's name; the task's uuid (KFP:
// the id of the DAG execution the task runs in) is the run id at the root
// and refused at its line inside a sub-DAG.
func TestKFPv2RunPlaceholders(t *testing.T) {
	const comps = `components:
  comp-say:
    executorLabel: exec-say
    inputDefinitions:
      parameters:
        msg:
          parameterType: STRING
`
	const rest = `deploymentSpec:
  executors:
    exec-say:
      container:
        command: [echo, '{{$.inputs.parameters[''msg'']}}']
        image: busybox
pipelineInfo:
  name: placeholders
schemaVersion: 2.1.0
`
	say := func(indent, constant string) string {
		return strings.ReplaceAll(`say:
  componentRef:
    name: comp-say
  inputs:
    parameters:
      msg:
        runtimeValue:
          constant: '`+constant+`'
  taskInfo:
    name: say-it`, "\n", "\n"+indent) + "\n"
	}
	file := func(constant string) []byte {
		return []byte(comps + rest + "root:\n  dag:\n    tasks:\n      " + say("      ", constant))
	}
	p, err := Parse("ph.yaml", file("{{$.pipeline_job_name}} {{$.pipeline_job_uuid}} {{$.pipeline_job_resource_name}} {{$.pipeline_task_name}} {{$.pipeline_task_uuid}}"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]Binding{"msg": {Literal: "{{run.id}} {{run.id}} {{run.id}} say-it {{run.id}}"}}, p.Step("say").Bindings()); diff != "" {
		t.Errorf("bindings of say (-want +got):\n%s", diff)
	}
	inSub := comps + `  comp-inner:
    dag:
      tasks:
        ` + say("        ", "{{$.pipeline_task_uuid}}") + rest + `root:
  dag:
    tasks:
      inner:
        componentRef:
          name: comp-inner
        taskInfo:
          name: inner
`
	_, err = Parse("ph.yaml", []byte(inSub))
	want := "ph.yaml:18:29: components.comp-inner.dag.tasks.say.inputs.parameters.msg.runtimeValue.constant: placeholder {{$.pipeline_task_uuid}} in a constant inside a sub-DAG or ParallelFor body is not supported: KFP's driver gives the ML Metadata id of the DAG execution the task runs in"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse: %v\nwant an error containing %q", err, want)
	}
}

// TestKFPv2Importer: a root importer is no step; the tasks reading its
// artifact read an artifact param: the root input parameter its URI is
// (of the importer's type, its default the param's), or for a constant URI
// one named after the task, the constant its default.
func TestKFPv2Importer(t *testing.T) {
	p, err := Load("testdata/kfpv2/importer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || p.Steps[0].Name != "read" {
		t.Fatalf("steps %v, want read only", p.Steps)
	}
	if diff := cmp.Diff([]string{"data_uri", "name", "importer-2"}, p.ParamOrder); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if prm := p.Params["data_uri"]; prm.Type != "Dataset" || prm.Default.Value != "s3://bucket/runs/r0/make/data" {
		t.Errorf("param data_uri = %+v, want a Dataset param with its default", prm)
	}
	if prm := p.Params["importer-2"]; prm.Type != "Model" || prm.Default.Value != "file:///store/r0/train/model" {
		t.Errorf("param importer-2 = %+v, want a Model param with the constant as its default", prm)
	}
	if diff := cmp.Diff(map[string]Binding{"data": {Param: "data_uri"}, "model": {Param: "importer-2"}}, p.Step("read").Bindings()); diff != "" {
		t.Errorf("bindings of read (-want +got):\n%s", diff)
	}
	if len(p.Step("read").After) != 0 {
		t.Errorf("read after %v, want nothing (the importers are no steps)", p.Step("read").After)
	}
	// The importers' metadata, their placeholders the pipeline input.
	for param, want := range map[string]string{
		"data_uri":   `{"k":2.50,"key":"value","names":["{{params.name}}","alias"]}`,
		"importer-2": `{"{{params.name}}-x":{"n":1}}`,
	} {
		if got, err := p.Params[param].MetadataJSON(); err != nil || got != want {
			t.Errorf("metadata of %s = %s, %v; want %s", param, got, err, want)
		}
	}
	got, err := p.ResolveParams(map[string]string{"data_uri": "file:///store/r1/make/data"})
	if want := map[string]string{"data_uri": "file:///store/r1/make/data", "name": "n", "importer-2": "file:///store/r0/train/model"}; err != nil || !cmp.Equal(want, got) {
		t.Errorf("ResolveParams = %v, %v; want %v", got, err, want)
	}
	if got, err := p.ResolveParams(map[string]string{"data_uri": "gs://bucket/data"}); err != nil || got["data_uri"] != "gs://bucket/data" {
		t.Errorf("ResolveParams of a gs:// URI (imported when the run starts) = %v, %v", got, err)
	}
	if _, err := p.ResolveParams(map[string]string{"data_uri": "https://host/data"}); err == nil || !strings.Contains(err.Error(), `-p data_uri: expected the URI of an artifact (Dataset) in the artifact store or of an object to import: "https://host/data" is neither the URI of an artifact an artifact store can hold`) {
		t.Errorf("ResolveParams of an https:// URI: %v", err)
	}
}

// TestKFPv2ImporterTaskMetadata: an importer's metadata given by a task's
// output parameter (a key and a value) is the artifact param's metadata
// naming that output: the task reading the artifact waits for that task.
// A task output that cannot be there is refused at its line, in KFP's
// terms: an artifact, an importer's output, one given to an importer in a
// sub-DAG.
func TestKFPv2ImporterTaskMetadata(t *testing.T) {
	const f = "testdata/kfpv2/importer_task_meta.yaml"
	p, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Params["importer"].MetadataJSON()
	if want := `{"by":"prefix-{{steps.make-name.outputs.Output}}","{{steps.make-name.outputs.Output}}":["{{params.name}}",1]}`; err != nil || got != want {
		t.Errorf("metadata %s, %v; want %s", got, err, want)
	}
	if diff := cmp.Diff([]string{"make-name"}, p.Deps("read")); diff != "" {
		t.Errorf("read's deps (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, from, to, want string
		n                    int // errors: the output in a key and in a value is reported at each
	}{
		{f, "outputParameterKey: Output\n                producerTask: make-name", "outputParameterKey: data\n                producerTask: make-name",
			`:56:15: deploymentSpec.executors.exec-importer.importer.metadata.by: output "data" of step "make-name" is an artifact (Dataset): an artifact parameter's metadata embeds output parameters (values)`, 2},
		{f, "outputParameterKey: Output\n                producerTask: make-name", "outputParameterKey: Output\n                producerTask: importer",
			`:88:31: root.dag.tasks.importer.inputs.parameters.metadata.taskOutputParameter.producerTask: task "importer" is an importer: its output is an artifact, not a parameter`, 1},
		{"testdata/kfpv2/importer_subdag.yaml", "              metadata:\n                componentInputParameter: pipelinechannel--name", "              metadata:\n                taskOutputParameter: {producerTask: make, outputParameterKey: Output}",
			`:23:38: components.comp-condition-1.dag.tasks.importer.inputs.parameters.metadata.taskOutputParameter: importer metadata given by a task output inside a sub-DAG (comp-condition-1) is not supported`, 1},
	} {
		src := data
		if tc.file != f {
			if src, err = os.ReadFile(tc.file); err != nil {
				t.Fatal(err)
			}
		}
		bad := strings.Replace(string(src), tc.from, tc.to, 1)
		if bad == string(src) {
			t.Fatalf("no %q in %s", tc.from, tc.file)
		}
		_, err := Parse(tc.file, []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.file+tc.want) || len(yamlfile.Split(err)) != tc.n {
			t.Errorf("error %v\nwant %d, with: %s", err, tc.n, tc.file+tc.want)
		}
	}
	// A ParallelFor's collected output (a JSON list).
	const loop = "testdata/kfpv2/importer_task_meta_loop.yaml"
	_, err = Load(loop)
	if want := loop + `:76:15: deploymentSpec.executors.exec-importer.importer.metadata.by: output "Output" of loop step "for-loop-1" is collected into a JSON list: an artifact parameter's metadata embeds single values`; err == nil || !strings.Contains(err.Error(), want) || len(yamlfile.Split(err)) != 2 {
		t.Errorf("error %v\nwant 2, with: %s", err, want)
	}
}

// TestKFPv2ImporterInLoop: an importer in a ParallelFor body is refused
// at its executor, once.
func TestKFPv2ImporterInLoop(t *testing.T) {
	const f = "testdata/kfpv2/importer_loop.yaml"
	_, err := Load(f)
	want := f + `:43:7: deploymentSpec.executors.exec-importer.importer: KFP importer is not supported yet in a ParallelFor body, or in a sub-DAG run in one`
	if err == nil || !strings.Contains(err.Error(), want) || len(yamlfile.Split(err)) != 1 {
		t.Errorf("Load: %v\nwant one error: %s", err, want)
	}
}

// TestKFPv2ImporterUnsupported: what pipectl cannot import is refused at
// its line, in KFP's terms.
func TestKFPv2ImporterUnsupported(t *testing.T) {
	const f = "testdata/kfpv2/importer_unsupported.yaml"
	_, err := Load(f)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		f + `:120:23: root.inputDefinitions.parameters.data_uri.defaultValue: KFP importer URI "http://models/model:1" is not supported: pipectl imports an artifact of its artifact store`,
		f + `:63:21: deploymentSpec.executors.exec-importer-2.importer.artifactUri.constant: KFP importer URI "https://host/data.txt" is not supported`,
		f + `:65:16: deploymentSpec.executors.exec-importer-2.importer.metadata.key: placeholder {{$.pipeline_job_name}} in importer metadata is not supported`,
		f + `:94:15: root.dag.tasks.from-task.inputs.parameters.uri: an importer's URI given by a task output is not supported yet`,
		f + `:108:40: root.dag.tasks.read.inputs.parameters.text.componentInputParameter: root input parameter "data_uri" is an importer's URI, an artifact param: pipectl cannot also give it as a value`,
		f + `:46:42: components.comp-condition-1.dag.tasks.importer.inputs.parameters.uri.componentInputParameter: input "pipelinechannel--data_uri" of comp-condition-1 is given by task condition-1 (root.dag.tasks.condition-1.inputs.parameters.pipelinechannel--data_uri) as a constant or a task output: an importer inside a sub-DAG is supported when its URI is a root input parameter passed down`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := len(yamlfile.Split(err)); n != 6 {
		t.Errorf("%d errors, want 6:\n%v", n, err)
	}
}

// TestKFPv2PipelineRoot: defaultPipelineRoot, the root a KFP run uses when
// it names none, is accepted (wiring.yaml has one) and changes nothing: a
// pipectl run always names its store. Text is expected there.
func TestKFPv2PipelineRoot(t *testing.T) {
	data, err := os.ReadFile("testdata/kfpv2/wiring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\ndefaultPipelineRoot: s3://change/me\n") {
		t.Fatal("wiring.yaml has no defaultPipelineRoot")
	}
	if _, err := Parse("root.yaml", data); err != nil {
		t.Fatalf("with defaultPipelineRoot: %v", err)
	}
	bad := strings.Replace(string(data), "defaultPipelineRoot: s3://change/me", "defaultPipelineRoot: {uri: s3://change/me}", 1)
	_, err = Parse("root.yaml", []byte(bad))
	if want := "defaultPipelineRoot: expected a pipeline root URI (text)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestKFPv2RuntimeResources: container resources given at run time by a
// task input (set_cpu_limit(cpu) of a pipeline channel) are the step's
// resources given by that input's value: a pipeline input's param, a task
// output (the step waits for it) or a constant; neither that input nor the
// SDK's copies of it (cpu_limit) are the component's inputs.
func TestKFPv2RuntimeResources(t *testing.T) {
	p, err := Load("testdata/kfpv2/resources.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("train")
	want := &Resources{CPU: "{{params.cpu}}", Memory: "{{steps.sizer.outputs.Output}}", GPU: "2", GPUResource: "amd.com/gpu"}
	if diff := cmp.Diff(want, s.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if got := s.Bindings(); len(got) != 1 || got["a"].Literal != "1" {
		t.Errorf("inputs %v, want a only", got)
	}
	if !slices.Contains(s.Deps(), "sizer") {
		t.Errorf("train depends on %v, want sizer", s.Deps())
	}
	data, err := os.ReadFile("testdata/kfpv2/resources.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for from, want := range map[string]string{
		"resourceCpuLimit: '{{$.inputs.parameters[''pipelinechannel--cpu'']}}'": `42:29: deploymentSpec.executors.exec-train.container.resources.resourceCpuLimit: the task (root.dag.tasks.train.inputs) has no input parameter "pipelinechannel--nope"`,
		"resourceType: amd.com/gpu": `41:27: deploymentSpec.executors.exec-train.container.resources.accelerator.resourceType: expected a value or a whole {{$.inputs.parameters['NAME']}}`,
		"            pipelinechannel--gpus:\n              runtimeValue:\n                constant: '2'": `40:28: deploymentSpec.executors.exec-train.container.resources.accelerator.resourceCount: expected 0 to 1024 GPUs, got "two"`,
	} {
		bad := strings.Replace(string(data), from, map[string]string{
			"resourceCpuLimit: '{{$.inputs.parameters[''pipelinechannel--cpu'']}}'": "resourceCpuLimit: '{{$.inputs.parameters[''pipelinechannel--nope'']}}'",
			"resourceType: amd.com/gpu": "resourceType: '{{$.inputs.parameters[''pipelinechannel--cpu'']}}-gpu'",
			"            pipelinechannel--gpus:\n              runtimeValue:\n                constant: '2'": "            pipelinechannel--gpus:\n              runtimeValue:\n                constant: 'two'",
		}[from], 1)
		if bad == string(data) {
			t.Fatalf("no %q in the file", from)
		}
		_, err := Parse("testdata/kfpv2/resources.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}

// TestKFPv2OutputMetadata: {{$.outputs.artifacts['NAME'].metadata}} is the
// output artifact's metadata when the program starts, {} (as KFP's local
// runner gives it); of a name that is no output artifact, an error.
func TestKFPv2OutputMetadata(t *testing.T) {
	data, err := os.ReadFile("testdata/kfpv2/wiring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const from = "        - '{{$.outputs.artifacts[''data''].path}}'\n"
	if !strings.Contains(string(data), from) {
		t.Fatal("wiring.yaml changed")
	}
	with := func(arg string) string {
		return strings.Replace(string(data), from, from+"        - '"+arg+"'\n", 1)
	}
	p, err := Parse("wiring.yaml", []byte(with("--meta={{$.outputs.artifacts[''data''].metadata}}")))
	if err != nil {
		t.Fatal(err)
	}
	if args := p.Step("produce").Resolved.Command; !slices.Contains(args, "--meta={}") {
		t.Errorf("produce's command %q, want --meta={}", args)
	}
	_, err = Parse("wiring.yaml", []byte(with("{{$.outputs.artifacts[''count''].metadata}}")))
	if want := `wiring.yaml:180:11: deploymentSpec.executors.exec-produce.container.command[6]: placeholder {{$.outputs.artifacts['count'].metadata}}: the component has no output artifact "count"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestKFPv2PodMetadata: the kubernetes platform spec's podMetadata is the
// steps' podMetadata, and fieldPathAsEnv of a label or an annotation the
// step's env with the value podMetadata gives it ("" for a key without a
// prefix it does not set); other field paths, and prefixed keys it does
// not set (KFP's and Argo's own), are errors.
func TestKFPv2PodMetadata(t *testing.T) {
	const f = "testdata/kfpv2/podmeta.yaml"
	p, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("labelled")
	want := &PodMetadata{Labels: map[string]string{"team": "ml"}, Annotations: map[string]string{"example.com/note": "a note"}}
	if diff := cmp.Diff(want, s.PodMetadata); diff != "" {
		t.Errorf("podMetadata (-want +got):\n%s", diff)
	}
	var env []string
	for _, e := range s.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if want := []string{"CASE_TEAM=ml", "CASE_NOTE=a note", "CASE_ABSENT="}; !cmp.Equal(want, env) {
		t.Errorf("env %q, want %q", env, want)
	}
	if plain := p.Step("plain"); plain.PodMetadata != nil || len(plain.Env) > 0 {
		t.Errorf("plain: %+v %v, want no podMetadata nor env", plain.PodMetadata, plain.Env)
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for from, tc := range map[string]struct{ to, want string }{
		"metadata.labels['absent']":                {"metadata.name", `53:24: platforms.kubernetes.deploymentSpec.executors.exec-labelled.fieldPathAsEnv[2].fieldPath: field path "metadata.name" is not supported`},
		"metadata.annotations['example.com/note']": {"metadata.annotations['example.com/other']", `51:24: platforms.kubernetes.deploymentSpec.executors.exec-labelled.fieldPathAsEnv[1].fieldPath: annotation "example.com/other" is not set by the executor's podMetadata`},
		"              team: ml":                   {"              pipectl.dev/run: x", `59:15: platforms.kubernetes.deploymentSpec.executors.exec-labelled.podMetadata.labels: key "pipectl.dev/run" is pipectl's or Argo's own`},
		"example.com/note: a note":                 {"example.com/note: '{{x}}'", `holds {{`},
	} {
		bad := strings.Replace(string(data), from, tc.to, 1)
		_, err := Parse(f, []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
}

// TestKFPv2IgnoreUpstreamFailure: ALL_UPSTREAM_TASKS_COMPLETED on a task
// reading an upstream task's output (KFP's ignore_upstream_failure()) is a
// step with trigger: completed after its dependentTasks; an input it reads
// of them without a default (KFP's SDK refuses it) is an error at the
// input, in KFP's terms.
func TestKFPv2IgnoreUpstreamFailure(t *testing.T) {
	const file = `components:
  comp-a:
    executorLabel: exec-a
    outputDefinitions:
      parameters:
        Output: {parameterType: STRING}
  comp-b:
    executorLabel: exec-b
    inputDefinitions:
      parameters:
        message: {parameterType: STRING, defaultValue: x, isOptional: true}
deploymentSpec:
  executors:
    exec-a:
      container: {image: busybox, command: [sh, -c, 'echo a > "$0"', "{{$.outputs.parameters['Output'].output_file}}"]}
    exec-b:
      container: {image: busybox, command: [echo, "{{$.inputs.parameters['message']}}"]}
pipelineInfo: {name: p}
root:
  dag:
    tasks:
      a:
        componentRef: {name: comp-a}
        taskInfo: {name: a}
      b:
        componentRef: {name: comp-b}
        dependentTasks: [a]
        inputs:
          parameters:
            message:
              taskOutputParameter: {outputParameterKey: Output, producerTask: a}
        taskInfo: {name: b}
        triggerPolicy: {strategy: ALL_UPSTREAM_TASKS_COMPLETED}
schemaVersion: 2.1.0
`
	p, err := Parse("ignore.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	b := p.Step("b")
	if b.Trigger != TriggerCompleted || !slices.Equal(b.After, []string{"a"}) || b.Finally {
		t.Errorf("step b: trigger %q, after %q, finally %v; want completed, [a], false", b.Trigger, b.After, b.Finally)
	}
	if in, _ := b.Resolved.Input("message"); in.Default.Value != "x" {
		t.Errorf("input message: default %q, want x", in.Default.Value)
	}
	if got := b.Inputs["message"].Value; got != "{{steps.a.outputs.Output}}" {
		t.Errorf("input message %q, want a's Output", got)
	}
	noDefault := strings.Replace(file, "message: {parameterType: STRING, defaultValue: x, isOptional: true}", "message: {parameterType: STRING}", 1)
	_, err = Parse("ignore.yaml", []byte(noDefault))
	want := `ignore.yaml:31:36: root.dag.tasks.b.inputs.parameters.message.taskOutputParameter: input "message" is given output "Output" of step "a", which is not there when that step did not succeed`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
