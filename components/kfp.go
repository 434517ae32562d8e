package components

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// kfpComponent is the shape of a Kubeflow Pipelines v1 component.yaml.
type kfpComponent struct {
	Name           string         `yaml:"name"`
	Description    string         `yaml:"description"`
	Metadata       yaml.Node      `yaml:"metadata"`
	Inputs         []kfpIO        `yaml:"inputs"`
	Outputs        []kfpIO        `yaml:"outputs"`
	Implementation kfpImplementor `yaml:"implementation"`
}

type kfpIO struct {
	Name        string    `yaml:"name"`
	Type        yaml.Node `yaml:"type"`
	Description string    `yaml:"description"`
	Default     yaml.Node `yaml:"default"`
	Optional    bool      `yaml:"optional"`
}

type kfpImplementor struct {
	Container kfpContainer `yaml:"container"`
}

type kfpContainer struct {
	Image   string            `yaml:"image"`
	Command []yaml.Node       `yaml:"command"`
	Args    []yaml.Node       `yaml:"args"`
	Env     map[string]string `yaml:"env"`
}

// kfpParamTypes maps KFP's parameter type names to pipectl's.
var kfpParamTypes = map[string]string{
	"string": TypeString, "str": TypeString, "text": TypeString,
	"integer": TypeInt, "int": TypeInt,
	"float": TypeFloat, "double": TypeFloat,
	"boolean": TypeBool, "bool": TypeBool,
	"jsonobject": TypeJSON, "jsonarray": TypeJSON, "dict": TypeJSON, "list": TypeJSON, "json": TypeJSON,
}

// kfpArtifactTypes maps KFP's artifact type names to pipectl's.
var kfpArtifactTypes = map[string]string{
	"dataset": TypeDataset, "model": TypeModel, "metrics": TypeMetrics,
}

var nonIdentRE = regexp.MustCompile(`[^a-z0-9_]+`)
var nonDNSRE = regexp.MustCompile(`[^a-z0-9]+`)

// kfpName turns a KFP input or output name ("Training data") into a pipectl one (training_data).
func kfpName(s string) string {
	return strings.Trim(nonIdentRE.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

// decodeKFP converts a KFP v1 component into a Component. Its placeholders
// inputValue, inputPath, inputUri, outputPath, outputUri and concat are
// supported; names are lower-cased with '_' for other characters.
func decodeKFP(f *yamlfile.File, n *yaml.Node, field string) (*Component, error) {
	var k kfpComponent
	if err := f.Decode(n, field, &k); err != nil {
		return nil, err
	}
	c := &Component{
		APIVersion: APIVersion,
		Kind:       "Component",
		Metadata: Metadata{
			Name:        strings.Trim(nonDNSRE.ReplaceAllString(strings.ToLower(k.Name), "-"), "-"),
			Description: k.Description,
		},
		Image: k.Implementation.Container.Image,
	}
	// How each input is used decides whether it is a parameter or an artifact.
	usage := map[string]string{}
	var errs []error
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
			key, val := n.Content[0].Value, n.Content[1]
			switch key {
			case "inputValue", "inputPath", "inputUri":
				usage[val.Value] = key
			case "concat":
				for _, e := range val.Content {
					walk(e)
				}
			}
		}
	}
	cont := k.Implementation.Container
	for _, list := range [][]yaml.Node{cont.Command, cont.Args} {
		for i := range list {
			walk(&list[i])
		}
	}
	for _, in := range k.Inputs {
		t := kfpType(&in.Type, usage[in.Name] == "inputValue")
		c.Inputs = append(c.Inputs, IO{Name: kfpName(in.Name), Type: t, Description: in.Description, Default: in.Default, Optional: in.Optional})
	}
	for _, out := range k.Outputs {
		c.Outputs = append(c.Outputs, IO{Name: kfpName(out.Name), Type: kfpType(&out.Type, false), Description: out.Description})
	}
	convert := func(list []yaml.Node, name string) []string {
		var out []string
		for i := range list {
			s, err := kfpArg(&list[i])
			if err != nil {
				errs = append(errs, f.Errorf(&list[i], fieldPath(field, "implementation", "container", name, i), "%v", err))
				continue
			}
			out = append(out, s)
		}
		return out
	}
	c.Command = convert(cont.Command, "command")
	c.Args = convert(cont.Args, "args")
	for _, name := range slices.Sorted(maps.Keys(cont.Env)) {
		c.Env = append(c.Env, EnvVar{Name: name, Value: cont.Env[name]})
	}
	if k.Name == "" {
		errs = append(errs, f.Errorf(n, fieldPath(field, "name"), "missing: a KFP component needs a name"))
	}
	return c, errors.Join(errs...)
}

// kfpType maps a KFP type to a pipectl type. Inputs used through inputValue
// are parameters whatever their type says.
func kfpType(t *yaml.Node, asValue bool) string {
	name := strings.ToLower(t.Value)
	if p, ok := kfpParamTypes[name]; ok {
		return p
	}
	if asValue {
		return TypeString
	}
	if a, ok := kfpArtifactTypes[name]; ok {
		return a
	}
	return TypeArtifact
}

// kfpArg converts one KFP command or args element to a pipectl template.
func kfpArg(n *yaml.Node) (string, error) {
	if n.Kind == yaml.ScalarNode {
		// Literal text: escape nothing; KFP literals cannot hold placeholders,
		// but ours can, so a literal "{{" would be misread.
		if strings.Contains(n.Value, "{{") {
			return "", fmt.Errorf("literal %q contains \"{{\", which pipectl reads as a placeholder", n.Value)
		}
		return n.Value, nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return "", fmt.Errorf("expected a string or a placeholder such as {inputValue: NAME}")
	}
	key, val := n.Content[0].Value, n.Content[1]
	switch key {
	case "inputValue":
		return "{{inputs." + kfpName(val.Value) + "}}", nil
	case "inputPath":
		return "{{inputs." + kfpName(val.Value) + ".path}}", nil
	case "inputUri":
		return "{{inputs." + kfpName(val.Value) + ".uri}}", nil
	case "outputPath":
		return "{{outputs." + kfpName(val.Value) + ".path}}", nil
	case "outputUri":
		return "{{outputs." + kfpName(val.Value) + ".uri}}", nil
	case "concat":
		var b strings.Builder
		for i := range val.Content {
			s, err := kfpArg(val.Content[i])
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		return b.String(), nil
	default:
		return "", fmt.Errorf("KFP placeholder %q is not supported (supported: inputValue, inputPath, inputUri, outputPath, outputUri, concat)", key)
	}
}
