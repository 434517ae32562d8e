package kfpv1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// decodeKFPText loads a KFP component held in text, as the file c.yaml.
func decodeKFPText(t *testing.T, text string) (*components.Component, error) {
	t.Helper()
	f, err := yamlfile.Parse("c.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := Decode(f, f.Root, "")
	return c, err
}

// decodeProgram loads a KFP component held in text and makes its program.
func decodeProgram(t *testing.T, text string) (*components.Component, *components.Program) {
	t.Helper()
	c, err := decodeKFPText(t, text)
	if err == nil {
		var p *components.Program
		if p, err = c.Program(); err == nil {
			return c, p
		}
	}
	t.Fatal(err)
	return nil, nil
}

func TestKFPConvert(t *testing.T) {
	type io struct{ Name, Type, KFPType, Path string }
	tests := []struct {
		name          string
		text          string
		wantName      string
		inputs        []io
		outputs       []io
		command, args []string
		env           []components.EnvVar
	}{{
		name: "placeholders and names",
		text: `
name: Train model (v2)
inputs:
- {name: Training data, type: CSV}
- {name: Learning-rate, type: Float, default: '0.1'}
- {name: learning_rate}
- {name: Label column}
outputs:
- {name: Model, type: Model}
- {name: Training data}
implementation:
  container:
    image: python:3.11
    command: [python3, train.py, --data, {inputPath: Training data}, --uri, {inputUri: Training data}]
    args: [--lr, {inputValue: Learning-rate}, {inputValue: learning_rate}, {concat: [--label=, {inputValue: Label column}, ';', 7]}, {outputPath: Model}, {outputUri: Training data}]
`,
		wantName: "train-model-v2",
		inputs: []io{
			{"training_data", components.TypeArtifact, "CSV", ""},
			{"learning_rate_2", components.TypeFloat, "Float", ""},
			{"learning_rate", components.TypeString, "", ""},
			{"label_column", components.TypeString, "", ""},
		},
		outputs: []io{{"model", components.TypeModel, "Model", ""}, {"training_data", components.TypeArtifact, "", ""}},
		command: []string{"python3", "train.py", "--data", "{{inputs.training_data.path}}", "--uri", "{{inputs.training_data.uri}}"},
		args:    []string{"--lr", "{{inputs.learning_rate_2}}", "{{inputs.learning_rate}}", "--label={{inputs.label_column}};7", "{{outputs.model.path}}", "{{outputs.training_data.uri}}"},
	}, {
		name: "if blocks, constant conditions, macros, env map, fileOutputs",
		text: `
inputs:
- {name: x, type: String, optional: true}
- {name: verbose, type: Boolean, default: 'False'}
- {name: cfg, type: JsonObject, default: ''}
- {name: Object, type: JsonObject}
- {name: 1st}
outputs:
- {name: out, type: String}
implementation:
  container:
    image: alpine
    command:
    - sh
    - {if: {cond: {isPresent: x}, then: [--x, {inputValue: x}], else: --no-x}}
    - {if: {cond: {inputValue: verbose}, then: [-v, {if: {cond: {isPresent: cfg}, then: [{inputValue: cfg}]}}]}}
    - {if: {cond: true, then: [yes]}}
    - {if: {cond: 'False', then: [no], else: [maybe]}}
    - {inputPath: Object}
    - 'gs://b/{{workflow.uid}}/{{ pod.name }}-{{workflow.name}}'
    - {inputValue: 1st}
    env: {B: 'b{{pod.name}}', A: plain}
    fileOutputs: {out: /tmp/kfp-out/out.txt}
`,
		wantName: "component",
		inputs: []io{
			{"x", components.TypeString, "String", ""}, {"verbose", components.TypeBool, "Boolean", ""},
			{"cfg", components.TypeString, "JsonObject", ""}, {"object", components.TypeJSON, "JsonObject", ""}, {"n1st", components.TypeString, "", ""},
		},
		outputs: []io{{"out", components.TypeString, "String", "/tmp/kfp-out/out.txt"}},
		command: []string{
			"sh",
			"{{if present inputs.x}}", "--x", "{{inputs.x}}", "{{else}}", "--no-x", "{{end}}",
			"{{if inputs.verbose}}", "-v", "{{if present inputs.cfg}}", "{{inputs.cfg}}", "{{end}}", "{{end}}",
			"yes", "maybe",
			"{{inputs.object.path}}",
			"gs://b/{{run.id}}/{{pod.name}}-{{run.id}}",
			"{{inputs.n1st}}",
		},
		env: []components.EnvVar{{Name: "B", Value: "b{{pod.name}}"}, {Name: "A", Value: "plain"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeKFPText(t, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			ios := func(l []components.IO) []io {
				var out []io
				for _, x := range l {
					out = append(out, io{x.Name, x.Type, x.Declared.Type, x.Path})
				}
				return out
			}
			got := []any{c.Metadata.Name, ios(c.Inputs), ios(c.Outputs), c.Command, c.Args, c.Env}
			want := []any{tt.wantName, tt.inputs, tt.outputs, tt.command, tt.args, tt.env}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("converted component (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKFPErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{{
		"graph", `
name: g
implementation:
  graph: {tasks: {}}
  container: {image: a, command: [a]}
`, `c.yaml:3:1: implementation: a KFP component's implementation is a container or a graph, not both`,
	}, {
		"v2 placeholder in a literal", `
name: v2
implementation:
  container:
    image: a
    command: [prog, "--in={{$.inputs.parameters['x']}}"]
`, `c.yaml:6:27: implementation.container.command[1]: {{$.inputs.parameters['x']}} names no input of the component`,
	}, {
		"v2 executorInput", `
name: v2
implementation:
  container:
    image: a
    args: [{inputMetadata: x}]
`, `c.yaml:6:13: implementation.container.args[0].inputMetadata: KFP v2 placeholder inputMetadata is not supported`,
	}, {
		"unknown Argo variable", `
name: m
implementation:
  container:
    image: a
    command: [prog, 'x {{workflow.namespace}}']
`, `c.yaml:6:24: implementation.container.command[1]: Argo variable {{workflow.namespace}} is not supported`,
	}, {
		"macro in env at its value", `
name: m
implementation:
  container:
    image: a
    command: [prog]
    env:
      A: ok
      B: '{{$.pipeline_root}}'
`, `c.yaml:9:11: implementation.container.env.B: KFP v2 placeholder {{$.pipeline_root}} is not supported`,
	}, {
		"bad env name at its key", `
name: m
implementation:
  container:
    image: a
    command: [prog]
    env: {A: ok, 'B-C': x}
`, `c.yaml:7:18: implementation.container.env.B-C: invalid environment variable name "B-C"`,
	}, {
		"inputPath names no input", `
name: m
inputs: [{name: Object}]
implementation:
  container:
    image: a
    command: [prog, {inputPath: Objekt}]
`, `c.yaml:7:33: implementation.container.command[1].inputPath: inputPath "Objekt" names no input of the component (inputs: Object)`,
	}, {
		"bad if condition", `
name: m
inputs: [{name: x, optional: true}]
implementation:
  container:
    image: a
    command: [prog, {if: {cond: maybe, then: [a]}}]
`, `c.yaml:7:33: implementation.container.command[1].if.cond: expected a truth value`,
	}, {
		"isPresent of no input", `
name: m
inputs: [{name: x, optional: true}]
implementation:
  container:
    image: a
    command: [prog, {if: {cond: {isPresent: y}, then: [a]}}]
`, `c.yaml:7:45: implementation.container.command[1].if.cond.isPresent: isPresent "y" names no input of the component (inputs: x)`,
	}, {
		"if inside concat", `
name: m
inputs: [{name: x, optional: true}]
implementation:
  container:
    image: a
    command: [prog, {concat: [a, {if: {cond: true, then: [b]}}]}]
`, `c.yaml:7:35: implementation.container.command[1].concat[1].if: an if inside a concat is not supported`,
	}, {
		"fileOutputs names no output", `
name: m
outputs: [{name: o}]
implementation:
  container:
    image: a
    command: [prog]
    fileOutputs: {p: /tmp/p}
`, `c.yaml:8:19: implementation.container.fileOutputs.p: names no output (outputs: o)`,
	}, {
		"inputUri of a value", `
name: m
inputs: [{name: n, type: Integer}]
implementation:
  container:
    image: a
    command: [prog, {inputUri: n}]
`, `c.yaml:7:22: implementation.container.command[1].inputUri: input "n" is a value, which has no URI`,
	}, {
		"unknown placeholder", `
name: m
implementation:
  container:
    image: a
    command: [prog, {inputFile: n}]
`, `c.yaml:6:22: implementation.container.command[1].inputFile: unknown KFP placeholder "inputFile" (supported: inputValue, inputPath, inputUri, outputPath, outputUri, concat, if)`,
	}, {
		"unknown field, in KFP's terms", `
name: m
implementation:
  container:
    image: a
    command: [prog]
    volumes: []
`, `c.yaml:7:5: implementation.container.volumes: unknown field "volumes"`,
	}, {
		"input without a name, at the input", `
name: m
inputs:
- type: String
implementation:
  container: {image: a, command: [prog]}
`, `c.yaml:4:3: inputs[0]: missing: name`,
	}, {
		"output named twice, at the name", `
name: m
outputs:
- {name: o}
- {name: o}
- {name: p, optional: true}
implementation:
  container: {image: a, command: [prog]}
`, `c.yaml:5:4: outputs[1].name: duplicate output name "o"`,
	}, {
		"optional output, at the output", `
name: m
outputs:
- {name: p, optional: true}
implementation:
  container: {image: a, command: [prog]}
`, `c.yaml:4:3: outputs[0]: an output takes no default and is not optional`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeKFPText(t, tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestKFPNameTable(t *testing.T) {
	got := kfpNameTable([]string{"Data", "data", "Data 2", "data_2", "My  input-file", "9 lives", "x__y"})
	want := map[string]string{
		// Names that are already identifiers keep them; the others take
		// theirs, or the next free "NAME N".
		"data": "data", "data_2": "data_2", "Data": "data_3", "Data 2": "data_2_2",
		"My  input-file": "my_input_file", "9 lives": "n9_lives", "x__y": "x_y",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kfpNameTable (-want +got):\n%s", diff)
	}
	for in, want := range map[string]string{"Train model (v2)": "train-model-v2", "": "", strings.Repeat("ab ", 30): strings.TrimSuffix(strings.Repeat("ab-", 21), "-")} {
		if got := kfpResourceName(in); got != want {
			t.Errorf("kfpResourceName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKFPArgv(t *testing.T) {
	_, prog := decodeProgram(t, `
name: conditional
inputs:
- {name: x, optional: true}
- {name: flag, type: Boolean, optional: true}
- {name: cfg, type: JsonObject, default: ''}
implementation:
  container:
    image: a
    command: [prog, {if: {cond: {isPresent: x}, then: [--x, {inputValue: x}], else: [--no-x]}}]
    args:
    - {if: {cond: {inputValue: flag}, then: [--flag, {if: {cond: {isPresent: x}, then: [--both]}}]}}
    - {concat: ['--cfg=', {inputValue: cfg}]}
    - 'run={{workflow.uid}} pod={{pod.name}}'
`)
	tests := []struct {
		given map[string]string
		want  []string
		err   string
	}{
		{nil, []string{"prog", "--no-x", "--cfg=", "run=r1 pod=r1-s"}, ""},
		{map[string]string{"x": "a b"}, []string{"prog", "--x", "a b", "--cfg=", "run=r1 pod=r1-s"}, ""},
		{map[string]string{"flag": "True", "x": ""}, []string{"prog", "--x", "", "--flag", "--both", "--cfg=", "run=r1 pod=r1-s"}, ""},
		{map[string]string{"flag": "false", "cfg": `{"a": 1.0}`}, []string{"prog", "--no-x", `--cfg={"a": 1.0}`, "run=r1 pod=r1-s"}, ""},
		{map[string]string{"flag": "1"}, []string{"prog", "--no-x", "--flag", "--cfg=", "run=r1 pod=r1-s"}, ""},
	}
	for _, tt := range tests {
		params, err := prog.ParamValues(tt.given)
		if err != nil {
			t.Fatal(err)
		}
		argv, err := prog.Argv(components.Placeholders{Params: params, Run: "r1", Step: "s", Pod: "r1-s"})
		if err != nil {
			t.Fatalf("Argv(%v): %v", tt.given, err)
		}
		if diff := cmp.Diff(tt.want, argv); diff != "" {
			t.Errorf("Argv(%v) (-want +got):\n%s", tt.given, diff)
		}
	}
	// A condition value that is no truth value fails at run time, as in KFP.
	_, err := prog.Argv(components.Placeholders{Params: map[string]string{"flag": "maybe", "cfg": ""}})
	if err == nil || !strings.Contains(err.Error(), `{{if inputs.flag}}: expected a truth value (true/false, yes/no, on/off, 1/0), got "maybe"`) {
		t.Errorf("Argv with flag=maybe: %v", err)
	}
}

func TestKFPCompatible(t *testing.T) {
	kfp := func(kt, typ string) components.IO {
		return components.IO{Declared: &components.Declared{Type: kt}, Type: typ}
	}
	pc := func(typ string) components.IO { return components.IO{Type: typ} }
	tests := []struct {
		out, in components.IO
		want    bool
	}{
		{kfp("", components.TypeArtifact), kfp("String", components.TypeString), true},         // untyped output feeds anything
		{kfp("Integer", components.TypeInt), kfp("", components.TypeArtifact), true},           // anything feeds an untyped input
		{kfp("GCSPath", components.TypeArtifact), kfp("GCSPath", components.TypeString), true}, // same names
		{kfp("String", components.TypeString), kfp("JsonObject", components.TypeString), false},
		{kfp("CSV", components.TypeArtifact), kfp("Artifact", components.TypeArtifact), true},
		{kfp("Artifact", components.TypeArtifact), kfp("Integer", components.TypeInt), false},
		{kfp("CSV", components.TypeArtifact), kfp("TSV", components.TypeArtifact), false},
		{pc(components.TypeDataset), kfp("CSV", components.TypeArtifact), true}, // pipectl rules between the pipectl types
		{pc(components.TypeDataset), kfp("Model", components.TypeModel), false},
		{pc(components.TypeDataset), kfp("", components.TypeArtifact), true},
		{pc(components.TypeInt), pc(components.TypeFloat), true},
	}
	for _, tt := range tests {
		if got := Compatible(tt.out, tt.in); got != tt.want {
			t.Errorf("Compatible(%+v, %+v) = %v, want %v", tt.out, tt.in, got, tt.want)
		}
	}
}
