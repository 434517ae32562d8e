package components

import (
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// APIVersion is the apiVersion of pipectl spec files.
const APIVersion = "pipectl.dev/v1alpha1"

// Parameter types.
const (
	TypeString = "string"
	TypeInt    = "int"
	TypeFloat  = "float"
	TypeBool   = "bool"
	TypeJSON   = "json"
)

// Artifact types.
const (
	TypeDataset  = "Dataset"
	TypeModel    = "Model"
	TypeMetrics  = "Metrics"
	TypeArtifact = "Artifact"
)

// ParamTypes and ArtifactTypes list the types an input or output may have.
var (
	ParamTypes    = []string{TypeString, TypeInt, TypeFloat, TypeBool, TypeJSON}
	ArtifactTypes = []string{TypeDataset, TypeModel, TypeMetrics, TypeArtifact}
)

// IsArtifact reports whether t is an artifact type.
func IsArtifact(t string) bool {
	for _, a := range ArtifactTypes {
		if a == t {
			return true
		}
	}
	return false
}

// IsParam reports whether t is a parameter type.
func IsParam(t string) bool {
	for _, p := range ParamTypes {
		if p == t {
			return true
		}
	}
	return false
}

// Metadata names a spec.
type Metadata struct {
	// Name is a DNS-1123 label.
	Name string `yaml:"name"`
	// Description is free text.
	Description string `yaml:"description,omitempty"`
	// Labels are copied to the run and, on Kubernetes, to its objects.
	Labels map[string]string `yaml:"labels,omitempty"`
}

// Component is a containerised program with typed inputs and outputs.
type Component struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   Metadata `yaml:"metadata"`
	// Inputs are the parameters and artifacts the program takes.
	Inputs []IO `yaml:"inputs,omitempty"`
	// Outputs are the artifacts and parameters the program produces. The
	// program writes each to the path of {{outputs.NAME.path}}; a parameter
	// output's file holds its value.
	Outputs []IO `yaml:"outputs,omitempty"`
	// Image is the container image the program runs in on Kubernetes.
	Image string `yaml:"image,omitempty"`
	// Command and Args are the program's argv, with placeholders.
	Command []string `yaml:"command"`
	Args    []string `yaml:"args,omitempty"`
	// Env sets environment variables (values may hold placeholders).
	Env []EnvVar `yaml:"env,omitempty"`
	// WorkingDir is where the program runs, relative to the component file's
	// directory locally; by default that directory itself.
	WorkingDir string `yaml:"workingDir,omitempty"`

	// Code is the digest of the component's folder (RunDir) as package
	// codepack packs it, "" when it is not shipped (ShipsCode). It is part
	// of the fingerprint; in a pod, Runtime.Prepare unpacks that pack as the
	// folder the program runs in.
	Code string `yaml:"-" json:"code,omitempty"`
	// CodeInImage is true when the component's program is in its image,
	// not in its folder (a component imported from a KFP v1 file): a cluster
	// run ships no code for it (ShipsCode).
	CodeInImage bool `yaml:"-" json:"-"`

	// Dir is the directory of the file the component came from; set by the loader.
	Dir string `yaml:"-" json:"-"`
	// Source is the file the component came from; set by the loader.
	Source string `yaml:"-" json:"-"`
}

// IO is one input or output of a component.
type IO struct {
	// Name is referred to by placeholders and by pipeline steps.
	Name string `yaml:"name"`
	// Type is a parameter type (string, int, float, bool, json) or an
	// artifact type (Dataset, Model, Metrics, Artifact).
	Type string `yaml:"type"`
	// Description is free text.
	Description string `yaml:"description,omitempty"`
	// Default makes an input parameter optional.
	Default yaml.Node `yaml:"default,omitempty" json:"-"`
	// Optional makes an input optional without a default: its placeholders
	// resolve to nothing (the argv element is dropped).
	Optional bool `yaml:"optional,omitempty"`

	// Declared is set for an input or output of a component imported from
	// another format (a KFP v1 file, package kfpv1): how that file declares
	// it, whose own rules then decide what may feed it; nil for a pipectl
	// component's.
	Declared *Declared `yaml:"-" json:"-"`
	// Path is the fixed path the program writes an output at (KFP's
	// fileOutputs), instead of the path of {{outputs.NAME.path}}.
	Path string `yaml:"-"`
}

// ValueType is the type a literal or a pipeline parameter given to input
// io is checked against: the input's own type for a parameter; string for
// an artifact input of an imported component, which takes a value as a
// file (as KFP v1 passes data); "" for other artifact inputs, which take no value.
func (io IO) ValueType() string {
	switch {
	case !IsArtifact(io.Type):
		return io.Type
	case io.Declared != nil:
		return TypeString
	}
	return ""
}

// Declared is an input or output as the file of an imported component
// declares it.
type Declared struct {
	// Name is the name the file gives it (pipectl's IO.Name is that name
	// made an identifier), which the file's other parts refer to it by.
	Name string
	// Type is its type as the file writes it, "" when untyped.
	Type string
}

// EnvVar is one environment variable of a component.
type EnvVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Input returns the input called name.
func (c *Component) Input(name string) (IO, bool) {
	for _, in := range c.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return IO{}, false
}

// Output returns the output called name.
func (c *Component) Output(name string) (IO, bool) {
	for _, out := range c.Outputs {
		if out.Name == name {
			return out, true
		}
	}
	return IO{}, false
}

// Required reports whether the input must be given a value.
func (io IO) Required() bool { return !io.HasDefault() && !io.Optional }

// HasDefault reports whether the input declares a default. A null default
// (null, ~ or nothing) is no default.
func (io IO) HasDefault() bool { return io.Default.Kind != 0 && !IsNull(&io.Default) }

var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`) })

// ValidIdent checks a param, input or output name. It returns a description
// of what is expected, or "".
func ValidIdent(name string) string {
	if len(name) > 63 || !identRE().MatchString(name) {
		return "a name of at most 63 letters, digits, '_' or '-', starting with a letter"
	}
	return ""
}

var dnsLabelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`) })

// ValidDNSLabel checks a name that becomes part of Kubernetes names. It
// returns a description of what is expected, or "".
func ValidDNSLabel(name string) string {
	if len(name) > 63 || !dnsLabelRE().MatchString(name) {
		return "a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit"
	}
	return ""
}

// TypeList formats the allowed types for messages.
func TypeList() string {
	return strings.Join(append(append([]string{}, ParamTypes...), ArtifactTypes...), ", ")
}
