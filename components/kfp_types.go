package components

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// KFP v1 types. A type is a name ("String", "GCSPath") or a mapping of one
// name to properties ({GCSPath: {data_type: CSV}}); only the name counts
// here.

// kfpParamTypes maps KFP's parameter type names (any case) to pipectl's:
// the names KFP's serializers know and those it treats as parameters.
var kfpParamTypes = map[string]string{
	"string": TypeString, "str": TypeString, "text": TypeString,
	"integer": TypeInt, "int": TypeInt,
	"float": TypeFloat, "double": TypeFloat,
	"boolean": TypeBool, "bool": TypeBool,
	"jsonobject": TypeJSON, "jsonarray": TypeJSON, "dict": TypeJSON, "dictionary": TypeJSON,
	"list": TypeJSON, "json": TypeJSON,
}

// kfpArtifactTypes maps KFP's artifact type names (any case) to pipectl's;
// any other name is an Artifact.
var kfpArtifactTypes = map[string]string{
	"dataset": TypeDataset, "model": TypeModel, "metrics": TypeMetrics,
}

// kfpTypeName is the name of a KFP type node, "" when untyped.
func kfpTypeName(t *yaml.Node) string {
	switch {
	case t.Kind == yaml.ScalarNode && t.Tag != "!!null":
		return t.Value
	case t.Kind == yaml.MappingNode && len(t.Content) >= 2:
		return t.Content[0].Value
	}
	return ""
}

// kfpInputType is the pipectl type of an input of KFP type name kt;
// byValue is true when the component reads the input through inputValue
// (or gives it a default), which makes any input a parameter.
func kfpInputType(kt string, byValue bool) string {
	if p, ok := kfpParamTypes[strings.ToLower(kt)]; ok {
		return p
	}
	if byValue {
		return TypeString
	}
	return kfpOutputType(kt)
}

// kfpOutputType is the pipectl type of an output of KFP type name kt.
func kfpOutputType(kt string) string {
	if p, ok := kfpParamTypes[strings.ToLower(kt)]; ok {
		return p
	}
	if a, ok := kfpArtifactTypes[strings.ToLower(kt)]; ok {
		return a
	}
	return TypeArtifact
}

// Compatible reports whether output out may feed input in. Between two
// ports of KFP v1 components KFP's own rule applies to the types as the
// files write them: untyped matches anything, a generic Artifact matches any
// non-parameter type, otherwise the names must be equal. An untyped KFP
// port matches anything; otherwise the pipectl types must be Assignable.
func Compatible(out, in IO) bool {
	switch {
	case out.KFP && out.KFPType == "", in.KFP && in.KFPType == "":
		return true
	case out.KFP && in.KFP:
		ot, it := out.KFPType, in.KFPType
		if strings.EqualFold(ot, "artifact") && !kfpIsParam(it) || strings.EqualFold(it, "artifact") && !kfpIsParam(ot) {
			return true
		}
		return ot == it
	}
	return Assignable(out.Type, in.Type)
}

func kfpIsParam(name string) bool {
	_, ok := kfpParamTypes[strings.ToLower(name)]
	return ok
}

// ValueType is the type a literal or a pipeline parameter given to input
// io is checked against: the input's own type for a parameter; string for
// an artifact input of a KFP component, which takes a value as a file (as
// KFP passes data); "" for other artifact inputs, which take no value.
func (io IO) ValueType() string {
	switch {
	case !IsArtifact(io.Type):
		return io.Type
	case io.KFP:
		return TypeString
	}
	return ""
}
