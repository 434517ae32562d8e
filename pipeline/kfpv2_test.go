package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		f + `:43:11: platforms.kubernetes.deploymentSpec.executors.exec-echo.secretAsEnv: KFP kubernetes platform spec "secretAsEnv" is not supported yet (executor exec-echo)`,
		f + `:33:17: root.dag.tasks.other.componentRef.name: unknown component "comp-missing" (components: comp-echo)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestKFPv2Platform: container resources and the kubernetes platform
// spec's tolerations and node selector become the fields of the steps
// running the executor.
func TestKFPv2Platform(t *testing.T) {
	p, err := Load("testdata/kfpv2/platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("train")
	want := &Resources{CPU: "2000m", Memory: "0.5G", GPU: 2, GPUResource: "amd.com/gpu"}
	if diff := cmp.Diff(want, s.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Toleration{{Key: "amd.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}, s.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"pool": "gpu"}, s.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
}
