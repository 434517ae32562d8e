package kfpv1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components"
)

// TestKFPv1WithV2Placeholders: a KFP v1-format component using KFP v2
// placeholders runs with its inputs and outputs by their KFP names, an
// input read through {{$.inputs.parameters[...]}} is a parameter, and
// {{$}} (or {executorInput: ...}) is the executor input JSON.
func TestKFPv1WithV2Placeholders(t *testing.T) {
	c, prog := decodeProgram(t, `
name: v2 style
inputs:
- {name: Text}
- {name: count, type: Integer}
- {name: data, type: Dataset}
outputs:
- {name: out, type: String}
- {name: model, type: Model}
implementation:
  container:
    image: a
    command: [prog, "--text={{$.inputs.parameters['Text']}}", "{{$.inputs.parameters['count']}}", "{{$.inputs.artifacts['data'].path}}",
      "{{$.outputs.parameters['out'].output_file}}", "{{$.outputs.artifacts['model'].uri}}", "{{$.pipeline_job_name}}/{{$.pipeline_task_name}}"]
    args: [--executor_input, "{{$}}", {executorInput: null}]
`)
	if in, _ := c.Input("text"); in.Type != components.TypeString {
		t.Errorf("input text is %s, want string (read as a value)", in.Type)
	}
	v := components.Placeholders{
		Params:      map[string]string{"text": "a \"b\"", "count": "3"},
		InputPaths:  map[string]string{"data": "/w/inputs/data"},
		OutputPaths: map[string]string{"out": "/w/outputs/out", "model": "/w/outputs/model"},
		OutputURIs:  map[string]string{"model": "s3://b/r/s/model"},
		OutputDir:   "/w/outputs",
		Run:         "r1", Step: "s",
	}
	argv, err := prog.Argv(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prog", `--text=a "b"`, "3", "/w/inputs/data", "/w/outputs/out", "s3://b/r/s/model", "r1/s", "--executor_input"}
	if diff := cmp.Diff(want, argv[:len(want)]); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if len(argv) != len(want)+2 || argv[len(want)] != argv[len(want)+1] {
		t.Fatalf("argv %q: want {{$}} and {executorInput} as the same executor input", argv)
	}
	var ei struct {
		Inputs struct {
			ParameterValues map[string]any `json:"parameterValues"`
			Artifacts       map[string]struct {
				Artifacts []struct{ Name, URI string }
			} `json:"artifacts"`
		} `json:"inputs"`
		Outputs struct {
			Parameters map[string]struct {
				OutputFile string `json:"outputFile"`
			} `json:"parameters"`
			OutputFile string `json:"outputFile"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(argv[len(want)]), &ei); err != nil {
		t.Fatalf("executor input %s: %v", argv[len(want)], err)
	}
	if got := ei.Inputs.ParameterValues; got["text"] != `a "b"` || got["count"] != 3.0 {
		t.Errorf("parameterValues %v: want text as a string, count as a number", got)
	}
	if a := ei.Inputs.Artifacts["data"].Artifacts; len(a) != 1 || a[0].URI != "/w/inputs/data" {
		t.Errorf("input artifact data %+v: want its local path as uri", a)
	}
	if ei.Outputs.Parameters["out"].OutputFile != "/w/outputs/out" || ei.Outputs.OutputFile != "/w/outputs/"+components.ExecutorOutputFile {
		t.Errorf("outputs %+v", ei.Outputs)
	}
}
