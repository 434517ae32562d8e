package kfpv1

import (
	"errors"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// A KFP v1 component.yaml (kfp.components' ComponentSpec) becomes a
// Component as KFP v1 would run it:
//
//   - names are KFP's: the component's is sanitised into a DNS label
//     ("Component" when it has none), each input's and output's into an
//     identifier, with KFP's _2, _3 suffixes on collisions (kfp_names.go);
//   - an input is a parameter when its type is one of KFP's parameter types
//     or when the component reads it through inputValue, otherwise an
//     artifact; an output likewise by its type (kfp_types.go);
//   - command and args elements become placeholders, if/then/else blocks and
//     macros (kfp_args.go);
//   - env values and literals keep their text, with the Argo macros
//     {{workflow.uid}} and {{workflow.name}} mapped to {{run.id}} and
//     {{pod.name}} kept;
//   - fileOutputs are outputs the program writes at the declared paths.
//
// Every problem is reported at its line and column in the KFP file's own
// terms (field paths such as implementation.container.args[3].if.cond).

// kfpComponent is the shape of a KFP v1 component.yaml.
type kfpComponent struct {
	Name           string            `yaml:"name"`
	Description    string            `yaml:"description"`
	Metadata       yaml.Node         `yaml:"metadata"`
	Version        string            `yaml:"version"`
	Inputs         []kfpIO           `yaml:"inputs"`
	Outputs        []kfpIO           `yaml:"outputs"`
	Implementation kfpImplementation `yaml:"implementation"`
}

type kfpIO struct {
	Name        string    `yaml:"name"`
	Type        yaml.Node `yaml:"type"`
	Description string    `yaml:"description"`
	Default     yaml.Node `yaml:"default"`
	Optional    bool      `yaml:"optional"`
	Annotations yaml.Node `yaml:"annotations"`
}

type kfpImplementation struct {
	Container yaml.Node `yaml:"container"`
	Graph     yaml.Node `yaml:"graph"`
}

type kfpContainer struct {
	Image       string      `yaml:"image"`
	Command     []yaml.Node `yaml:"command"`
	Args        []yaml.Node `yaml:"args"`
	Env         yaml.Node   `yaml:"env"`
	FileOutputs yaml.Node   `yaml:"fileOutputs"`
}

// decodeKFP converts the KFP v1 component at node n of file f (field is its
// dotted path, "" for a whole file) into a Component, and checks it; a
// graph component's graph is returned too.
func decodeKFP(f *yamlfile.File, n *yaml.Node, field string) (*components.Component, *Graph, error) {
	var k kfpComponent
	if err := f.Decode(n, field, &k); err != nil {
		return nil, nil, err
	}
	if k.Implementation.Graph.Kind != 0 {
		return decodeGraph(f, n, field, &k)
	}
	c, err := decodeContainer(f, n, field, &k)
	return c, nil, err
}

// decodeContainer converts a KFP v1 container component.
func decodeContainer(f *yamlfile.File, n *yaml.Node, field string, k *kfpComponent) (*components.Component, error) {
	at := func(path ...any) string { return components.JoinField(field, path...) }
	keyOf := func(path ...any) *yaml.Node { return keyNode(n, path...) }
	if k.Implementation.Container.Kind == 0 {
		return nil, f.Errorf(keyOf("implementation"), at("implementation"), "missing: container (a KFP v1 component's implementation is a container or a graph)")
	}
	var cont kfpContainer
	if err := f.Decode(&k.Implementation.Container, at("implementation", "container"), &cont); err != nil {
		return nil, err
	}
	var errs []error
	name := k.Name
	if name == "" {
		name = kfpDefaultName
	}
	c := &components.Component{
		APIVersion:  components.APIVersion,
		Kind:        "Component",
		Metadata:    components.Metadata{Name: kfpResourceName(name), Description: k.Description},
		Image:       cont.Image,
		CodeInImage: true,
	}
	if want := components.ValidDNSLabel(c.Metadata.Name); want != "" {
		errs = append(errs, f.Errorf(keyOf("name"), at("name"), "KFP name %q gives the component name %q, which is not %s", k.Name, c.Metadata.Name, want))
	}
	conv := &kfpConverter{f: f, field: at("implementation", "container"), inputs: map[string]kfpPort{}, outputs: map[string]kfpPort{}}
	usage := kfpUsage(append(append([]yaml.Node{}, cont.Command...), cont.Args...))

	inNames := kfpNameTable(ioNames(k.Inputs))
	for i, in := range k.Inputs {
		io, port, err := conv.input(in, inNames[in.Name], usage[in.Name], keyOf("inputs", i), at("inputs", i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Inputs = append(c.Inputs, io)
		conv.inputs[in.Name] = port
	}
	outNames := kfpNameTable(ioNames(k.Outputs))
	fixed, err := conv.fileOutputs(&cont.FileOutputs, k.Outputs)
	if err != nil {
		errs = append(errs, err)
	}
	for i, out := range k.Outputs {
		io, port, err := conv.output(out, outNames[out.Name], keyOf("outputs", i), at("outputs", i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		io.Path = fixed[out.Name]
		c.Outputs = append(c.Outputs, io)
		conv.outputs[out.Name] = port
	}
	c.Command, errs = conv.args(cont.Command, "command", errs)
	c.Args, errs = conv.args(cont.Args, "args", errs)
	if len(cont.Command) == 0 && len(cont.Args) == 0 {
		errs = append(errs, f.Errorf(keyOf("implementation", "container"), at("implementation", "container"), "missing: command (the program to run, as a list)"))
	}
	env, err := conv.env(&cont.Env)
	if err != nil {
		errs = append(errs, err)
	}
	c.Env = env
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The conversion builds valid templates; a failure here is pipectl's bug.
	p, err := c.Program()
	if err == nil {
		err = p.CheckArgv()
	}
	if err != nil {
		return nil, f.Errorf(n, field, "internal error converting the KFP component: %v", err)
	}
	return c, nil
}

func ioNames(ios []kfpIO) []string {
	out := make([]string, len(ios))
	for i, io := range ios {
		out[i] = io.Name
	}
	return out
}

// kfpPort is what the converter knows of a KFP input or output.
type kfpPort struct {
	// name is pipectl's name for it.
	name string
	// param is true for parameters, false for artifacts.
	param bool
}

// kfpConverter converts the arguments and env of one KFP component.
type kfpConverter struct {
	f *yamlfile.File
	// field is the dotted path of the container.
	field string
	// inputs and outputs are the component's ports by their KFP names.
	inputs, outputs map[string]kfpPort
}

// keyNode returns the key naming the node at path below n, or the deepest
// node found on the way when there is none (a sequence item, a missing key):
// where an error about that field points.
func keyNode(n *yaml.Node, path ...any) *yaml.Node {
	v, key, _ := yamlfile.Lookup(n, path...)
	if key != nil {
		return key
	}
	return v
}

// checkName checks the KFP name kfpName of an input or output (kind),
// written at node n, and the pipectl name it gives; seen are the ones
// converted before it.
func (cv *kfpConverter) checkName(kind string, seen map[string]kfpPort, kfpName, name string, n *yaml.Node, field string) error {
	switch _, dup := seen[kfpName]; {
	case kfpName == "":
		return cv.f.Errorf(n, field, "missing: name")
	case dup:
		return cv.f.Errorf(keyNode(n, "name"), field+".name", "duplicate %s name %q", kind, kfpName)
	}
	if want := components.ValidIdent(name); want != "" {
		return cv.f.Errorf(keyNode(n, "name"), field+".name", "KFP %s name %q gives %q, which is not %s", kind, kfpName, name, want)
	}
	return nil
}

// input converts one KFP input, written at node n; uses are the
// placeholders that read it.
func (cv *kfpConverter) input(in kfpIO, name string, uses map[string]bool, n *yaml.Node, field string) (components.IO, kfpPort, error) {
	f := cv.f
	if err := cv.checkName("input", cv.inputs, in.Name, name, n, field); err != nil {
		return components.IO{}, kfpPort{}, err
	}
	kt := kfpTypeName(&in.Type)
	io := components.IO{Name: name, Description: in.Description, Optional: in.Optional, Declared: &components.Declared{Name: in.Name, Type: kt}}
	io.Type = kfpInputType(kt, uses["inputValue"] || in.Default.Kind != 0 && !components.IsNull(&in.Default))
	if in.Default.Kind != 0 && !components.IsNull(&in.Default) {
		if in.Default.Kind != yaml.ScalarNode && io.Type != components.TypeJSON {
			return components.IO{}, kfpPort{}, f.Errorf(&in.Default, field+".default", "expected a single value, got a %s", components.KindName(&in.Default))
		}
		// KFP passes a default as written whatever its type says (JsonObject
		// inputs commonly default to ''): one that does not check against
		// the type makes the input a string.
		if _, err := components.NodeValue(io.Type, &in.Default); err != nil {
			io.Type = components.TypeString
		}
		io.Default = in.Default
	}
	return io, kfpPort{name: name, param: !components.IsArtifact(io.Type)}, nil
}

// output converts one KFP output, written at node n.
func (cv *kfpConverter) output(out kfpIO, name string, n *yaml.Node, field string) (components.IO, kfpPort, error) {
	f := cv.f
	if err := cv.checkName("output", cv.outputs, out.Name, name, n, field); err != nil {
		return components.IO{}, kfpPort{}, err
	}
	if out.Default.Kind != 0 || out.Optional {
		return components.IO{}, kfpPort{}, f.Errorf(n, field, "an output takes no default and is not optional")
	}
	kt := kfpTypeName(&out.Type)
	io := components.IO{Name: name, Type: kfpOutputType(kt), Description: out.Description, Declared: &components.Declared{Name: out.Name, Type: kt}}
	return io, kfpPort{name: name, param: !components.IsArtifact(io.Type)}, nil
}

// fileOutputs reads the old-style fileOutputs mapping (output name -> the
// path the program writes it at).
func (cv *kfpConverter) fileOutputs(n *yaml.Node, outs []kfpIO) (map[string]string, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	field := components.JoinField(cv.field, "fileOutputs")
	if n.Kind != yaml.MappingNode {
		return nil, cv.f.Errorf(n, field, "expected a mapping of output names to the paths the program writes them at")
	}
	declared := map[string]bool{}
	for _, o := range outs {
		declared[o.Name] = true
	}
	out := map[string]string{}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !declared[k.Value]:
			errs = append(errs, cv.f.Errorf(k, components.JoinField(field, k.Value), "names no output (outputs: %s)", strings.Join(ioNames(outs), ", ")))
		case v.Kind != yaml.ScalarNode || !strings.HasPrefix(v.Value, "/"):
			errs = append(errs, cv.f.Errorf(v, components.JoinField(field, k.Value), "expected the absolute path the program writes output %q at", k.Value))
		default:
			out[k.Value] = v.Value
		}
	}
	return out, errors.Join(errs...)
}

// env converts the container's env mapping (name -> value); values keep
// their text, with KFP's macros mapped.
func (cv *kfpConverter) env(n *yaml.Node) ([]components.EnvVar, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	field := components.JoinField(cv.field, "env")
	if n.Kind != yaml.MappingNode {
		return nil, cv.f.Errorf(n, field, "expected a mapping of variable names to values")
	}
	var env []components.EnvVar
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !components.ValidEnvName(k.Value) {
			errs = append(errs, cv.f.Errorf(k, components.JoinField(field, k.Value), "invalid environment variable name %q", k.Value))
			continue
		}
		if v.Kind != yaml.ScalarNode {
			errs = append(errs, cv.f.Errorf(v, components.JoinField(field, k.Value), "expected a string value, got a %s", components.KindName(v)))
			continue
		}
		val, err := cv.literal(v, components.JoinField(field, k.Value))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		env = append(env, components.EnvVar{Name: k.Value, Value: val})
	}
	return env, errors.Join(errs...)
}

// kfpDefaultName is the name KFP gives a component without one.
const kfpDefaultName = "Component"
