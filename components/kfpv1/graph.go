package kfpv1

import (
	"errors"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// Graph is the implementation.graph of a KFP v1 graph component: tasks
// (each a componentRef and arguments) and outputValues. The component's
// inputs and outputs are converted as any KFP component's (an input is a
// parameter when its type is a KFP parameter type or it has a default);
// Graph.Pipeline writes it as a nested pipeline.
type Graph struct {
	// File holds the graph; Node is the graph mapping and Field its dotted
	// path, for messages.
	File  *yamlfile.File
	Node  *yaml.Node
	Field string
	// Inputs and Outputs map the component's KFP input and output names
	// to pipectl's.
	Inputs, Outputs map[string]string
}

// decodeGraph converts a KFP v1 graph component: its inputs and
// outputs; the graph itself is checked where it is expanded.
func decodeGraph(f *yamlfile.File, n *yaml.Node, field string, k *kfpComponent) (*components.Component, *Graph, error) {
	at := func(path ...any) string { return components.JoinField(field, path...) }
	keyOf := func(path ...any) *yaml.Node { return keyNode(n, path...) }
	if k.Implementation.Container.Kind != 0 {
		return nil, nil, f.Errorf(keyOf("implementation"), at("implementation"), "a KFP component's implementation is a container or a graph, not both")
	}
	var errs []error
	name := k.Name
	if name == "" {
		name = kfpDefaultName
	}
	c := &components.Component{APIVersion: components.APIVersion, Kind: "Component", Metadata: components.Metadata{Name: kfpResourceName(name), Description: k.Description}, CodeInImage: true}
	if want := components.ValidDNSLabel(c.Metadata.Name); want != "" {
		errs = append(errs, f.Errorf(keyOf("name"), at("name"), "KFP name %q gives the component name %q, which is not %s", k.Name, c.Metadata.Name, want))
	}
	g := &Graph{File: f, Node: &k.Implementation.Graph, Field: at("implementation", "graph"),
		Inputs: kfpNameTable(ioNames(k.Inputs)), Outputs: kfpNameTable(ioNames(k.Outputs))}
	if g.Node.Kind != yaml.MappingNode {
		errs = append(errs, f.Errorf(g.Node, g.Field, "expected a graph: a mapping with tasks and outputValues"))
	}
	conv := &kfpConverter{f: f, field: g.Field, inputs: map[string]kfpPort{}, outputs: map[string]kfpPort{}}
	for i, in := range k.Inputs {
		io, port, err := conv.input(in, g.Inputs[in.Name], nil, keyOf("inputs", i), at("inputs", i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Inputs = append(c.Inputs, io)
		conv.inputs[in.Name] = port
	}
	for i, out := range k.Outputs {
		io, port, err := conv.output(out, g.Outputs[out.Name], keyOf("outputs", i), at("outputs", i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Outputs = append(c.Outputs, io)
		conv.outputs[out.Name] = port
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return c, g, nil
}
