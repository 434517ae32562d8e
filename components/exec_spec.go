package components

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/artifacts"
)

// The wire format of `pipectl exec` (and `pipectl launch`) in a compiled
// workflow. The component and the step's wiring travel base64-encoded, so
// that no workflow engine evaluates the text inside them (component
// commands hold placeholders like {{inputs.epochs}}, literals may hold
// anything). Only values known at run time travel in the clear, each in the
// value encoding of EncodeValue:
//
//	--run RUN              the run id ({{workflow.name}} in Argo)
//	--component B64        base64(JSON(ExecComponent))
//	--step B64             base64(JSON(ExecStep))
//	--param NAME=VALUE     the value of pipeline parameter NAME
//	--upstream INPUT=VALUE the value of an upstream output parameter bound to INPUT

// ExecSpecVersion is the version of the ExecComponent and ExecStep formats.
const ExecSpecVersion = 1

// ExecComponent is a component as `pipectl exec` receives it: the component
// with its input defaults resolved to canonical strings (JSON has no place
// for the YAML nodes they are loaded as).
type ExecComponent struct {
	// Version is ExecSpecVersion.
	Version int `json:"v"`
	// Name is the component's metadata.name.
	Name string `json:"name"`
	// Inputs and Outputs are the component's declared inputs and outputs.
	Inputs  []ExecIO `json:"inputs,omitempty"`
	Outputs []ExecIO `json:"outputs,omitempty"`
	// Command and Args are the program's argv, with placeholders.
	Command []string `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env sets environment variables (values may hold placeholders).
	Env []EnvVar `json:"env,omitempty"`
	// WorkingDir is where the program runs: absolute, or relative to the
	// working directory of `pipectl exec` (the image's WORKDIR).
	WorkingDir string `json:"workingDir,omitempty"`
}

// ExecIO is one input or output of an ExecComponent.
type ExecIO struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Default is the canonical default of an input parameter.
	Default *string `json:"default,omitempty"`
	// Optional marks an input that may be left out.
	Optional bool `json:"optional,omitempty"`
	// Path is the fixed path the program writes an output at (KFP's fileOutputs).
	Path string `json:"path,omitempty"`
}

// ExecStep is how one step wires a component: what each input gets.
type ExecStep struct {
	// Version is ExecSpecVersion.
	Version int `json:"v"`
	// Step is the step's name: outputs go to <run>/<step>/<output>.
	Step string `json:"step"`
	// Params give input parameters their values, by input name.
	Params map[string]Text `json:"params,omitempty"`
	// Inputs give input artifacts their producers, by input name: the
	// artifact is <run>/<step>/<output> in the store.
	Inputs map[string]OutputRef `json:"inputs,omitempty"`
	// Env adds variables to the program's environment.
	Env []EnvText `json:"env,omitempty"`
}

// OutputRef names an output of a step of the same run.
type OutputRef struct {
	Step   string `json:"step"`
	Output string `json:"output"`
}

// Text is a value made at run time by concatenating its parts.
type Text []Part

// Part is one piece of a Text: literal text, the value of a pipeline
// parameter (--param), or the value of an upstream output parameter
// (--upstream). Exactly one field is set; none means the empty string.
type Part struct {
	Lit      string `json:"lit,omitempty"`
	Param    string `json:"param,omitempty"`
	Upstream string `json:"upstream,omitempty"`
}

// EnvText is an environment variable whose value is made at run time.
type EnvText struct {
	Name  string `json:"name"`
	Value Text   `json:"value"`
}

// ExecComponentOf converts a loaded component to its wire form.
func ExecComponentOf(c *Component) (*ExecComponent, error) {
	ec := &ExecComponent{
		Version: ExecSpecVersion, Name: c.Metadata.Name,
		Command: c.Command, Args: c.Args, Env: c.Env, WorkingDir: c.WorkingDir,
	}
	for _, in := range c.Inputs {
		io := ExecIO{Name: in.Name, Type: in.Type, Optional: in.Optional}
		if in.HasDefault() {
			v, err := NodeValue(in.Type, &in.Default)
			if err != nil {
				return nil, fmt.Errorf("component %s: input %q: default: %v", c.Metadata.Name, in.Name, err)
			}
			io.Default = &v
		}
		ec.Inputs = append(ec.Inputs, io)
	}
	for _, out := range c.Outputs {
		ec.Outputs = append(ec.Outputs, ExecIO{Name: out.Name, Type: out.Type, Path: out.Path})
	}
	return ec, nil
}

// Component converts the wire form back to a component.
func (ec *ExecComponent) Component() (*Component, error) {
	c := &Component{
		APIVersion: APIVersion, Kind: "Component", Metadata: Metadata{Name: ec.Name},
		Command: ec.Command, Args: ec.Args, Env: ec.Env, WorkingDir: ec.WorkingDir,
	}
	for _, io := range ec.Inputs {
		in := IO{Name: io.Name, Type: io.Type, Optional: io.Optional}
		if io.Default != nil {
			in.Default.Kind, in.Default.Tag, in.Default.Value = yaml.ScalarNode, "!!str", *io.Default
		}
		c.Inputs = append(c.Inputs, in)
	}
	for _, io := range ec.Outputs {
		c.Outputs = append(c.Outputs, IO{Name: io.Name, Type: io.Type, Path: io.Path})
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("component %s: empty command", ec.Name)
	}
	for _, list := range [][]string{c.Command, c.Args} {
		if _, err := c.checkList(list, true); err != nil {
			return nil, fmt.Errorf("component %s: %v", ec.Name, err)
		}
	}
	return c, nil
}

// EncodeSpec returns base64(JSON(v)): the form --component and --step take.
// JSON object keys are sorted, so the same value always gives the same text.
func EncodeSpec(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeSpec reverses EncodeSpec into v, strictly: unknown fields and a
// version other than ExecSpecVersion are errors.
func DecodeSpec(s string, v any) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("not base64: %v", err)
	}
	var head struct {
		Version int `json:"v"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if head.Version != ExecSpecVersion {
		return fmt.Errorf("spec version %d, this pipectl reads version %d (use the same pipectl image as the compiler)", head.Version, ExecSpecVersion)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ExecValuePrefix marks a value in the base64 form of EncodeValue.
const ExecValuePrefix = "pipectl-b64:"

// EncodeValue returns the text a value travels as through a workflow
// engine and Kubernetes: the value itself when that is safe, otherwise
// ExecValuePrefix followed by the value in standard base64. A value is sent
// encoded when it contains "{{" (Argo would evaluate it), "$" (Kubernetes
// expands $(VAR) in args and env), is not valid UTF-8, or begins with
// ExecValuePrefix itself. Every value has exactly one encoding.
func EncodeValue(v string) string {
	if strings.Contains(v, "{{") || strings.Contains(v, "$") || !utf8.ValidString(v) || strings.HasPrefix(v, ExecValuePrefix) {
		return ExecValuePrefix + base64.StdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// DecodeValue reverses EncodeValue. A value given by hand (say with `argo
// submit -p`) may be plain text, or encoded when it needs to be.
func DecodeValue(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, ExecValuePrefix)
	if !ok {
		return s, nil
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("value %q starts with %s but is not base64: %v", s, ExecValuePrefix, err)
	}
	return string(b), nil
}

// ExecValues are the run-time values of an exec invocation, decoded.
type ExecValues struct {
	// Run is the run id.
	Run string
	// Params are pipeline parameter values, by name.
	Params map[string]string
	// Upstream are upstream output parameter values, by the input they feed.
	Upstream map[string]string
}

// Eval makes the text's value.
func (t Text) Eval(v ExecValues) (string, error) {
	var b strings.Builder
	for _, p := range t {
		switch {
		case p.Param != "":
			s, ok := v.Params[p.Param]
			if !ok {
				return "", fmt.Errorf("no value for pipeline parameter %q (want --param %s=VALUE)", p.Param, p.Param)
			}
			b.WriteString(s)
		case p.Upstream != "":
			s, ok := v.Upstream[p.Upstream]
			if !ok {
				return "", fmt.Errorf("no upstream value for input %q (want --upstream %s=VALUE)", p.Upstream, p.Upstream)
			}
			b.WriteString(s)
		default:
			b.WriteString(p.Lit)
		}
	}
	return b.String(), nil
}

// Invocation builds the invocation of component c for this step, with input
// artifact URIs in store s.
func (es *ExecStep) Invocation(c *Component, s artifacts.Store, v ExecValues) (*Invocation, error) {
	if es.Step == "" {
		return nil, fmt.Errorf("the step spec names no step")
	}
	if v.Run == "" {
		return nil, fmt.Errorf("no run id (want --run RUN)")
	}
	inv := &Invocation{Component: c, Run: v.Run, Step: es.Step, Params: map[string]string{}, Inputs: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(es.Params)) {
		val, err := es.Params[name].Eval(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %v", name, err)
		}
		inv.Params[name] = val
	}
	for _, name := range slices.Sorted(maps.Keys(es.Inputs)) {
		ref := es.Inputs[name]
		if ref.Step == "" || ref.Output == "" {
			return nil, fmt.Errorf("input %q: the step spec names no producing step and output", name)
		}
		inv.Inputs[name] = s.URI(artifacts.OutputKey(v.Run, ref.Step, ref.Output))
	}
	for _, e := range es.Env {
		val, err := e.Value.Eval(v)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", e.Name, err)
		}
		inv.Env = append(inv.Env, e.Name+"="+val)
	}
	return inv, nil
}
