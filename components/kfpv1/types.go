package kfpv1

import (
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
)

// KFP v1 types. A type is a name ("String", "GCSPath") or a mapping of one
// name to properties ({GCSPath: {data_type: CSV}}); only the name counts
// here.

// kfpParamTypes maps KFP's parameter type names (any case) to pipectl's:
// the names KFP's serializers know and those it treats as parameters.
var kfpParamTypes = map[string]string{
	"string": components.TypeString, "str": components.TypeString, "text": components.TypeString,
	"integer": components.TypeInt, "int": components.TypeInt,
	"float": components.TypeFloat, "double": components.TypeFloat,
	"boolean": components.TypeBool, "bool": components.TypeBool,
	"jsonobject": components.TypeJSON, "jsonarray": components.TypeJSON, "dict": components.TypeJSON, "dictionary": components.TypeJSON,
	"list": components.TypeJSON, "json": components.TypeJSON,
}

// kfpArtifactTypes maps KFP's artifact type names (any case) to pipectl's;
// any other name is an Artifact.
var kfpArtifactTypes = map[string]string{
	"dataset": components.TypeDataset, "model": components.TypeModel, "metrics": components.TypeMetrics,
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
		return components.TypeString
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
	return components.TypeArtifact
}

// Compatible reports whether output out may feed input in. Between two
// ports of KFP v1 components KFP's own rule applies to the types as the
// files write them: untyped matches anything, a generic Artifact matches any
// non-parameter type, otherwise the names must be equal. An untyped KFP
// port matches anything; otherwise the pipectl types must be Assignable.
func Compatible(out, in components.IO) bool {
	od, id := out.Declared, in.Declared
	switch {
	case od != nil && od.Type == "", id != nil && id.Type == "":
		return true
	case od != nil && id != nil:
		ot, it := od.Type, id.Type
		if strings.EqualFold(ot, "artifact") && !kfpIsParam(it) || strings.EqualFold(it, "artifact") && !kfpIsParam(ot) {
			return true
		}
		return ot == it
	}
	return components.Assignable(out.Type, in.Type)
}

// TypeName is an input's or output's type for messages: a KFP component's
// as its file writes it.
func TypeName(io components.IO) string {
	switch {
	case io.Declared != nil && io.Declared.Type == "":
		return "untyped"
	case io.Declared != nil:
		return io.Declared.Type
	}
	return io.Type
}

func kfpIsParam(name string) bool {
	_, ok := kfpParamTypes[strings.ToLower(name)]
	return ok
}
