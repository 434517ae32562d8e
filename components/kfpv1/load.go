package kfpv1

import (
	"path/filepath"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// Load reads and validates the component file at path: a pipectl Component
// (apiVersion pipectl.dev/v1alpha1) or a KFP v1 component.yaml; for a KFP
// graph component it returns the graph too.
func Load(path string) (*components.Component, *Graph, error) {
	f, err := yamlfile.Read(path)
	if err != nil {
		return nil, nil, err
	}
	return Decode(f, f.Root, "")
}

// Decode decodes and validates the component held by node n of file f (the
// file's root, or an inline component in a pipeline, whose dotted path is
// field), in either format; for a KFP graph component it returns the graph
// too.
func Decode(f *yamlfile.File, n *yaml.Node, field string) (*components.Component, *Graph, error) {
	if !IsKFP(n) {
		c, err := components.Decode(f, n, field)
		return c, nil, err
	}
	// Checked as it is converted, in its own terms.
	c, g, err := decodeKFP(f, n, field)
	if err != nil {
		return nil, nil, err
	}
	c.Source, c.Dir = f.Path, filepath.Dir(f.Path)
	return c, g, nil
}

// IsKFP reports whether the mapping n is a KFP v1 component: one with an
// implementation and no apiVersion.
func IsKFP(n *yaml.Node) bool {
	_, _, hasImpl := yamlfile.Lookup(n, "implementation")
	_, _, hasAPI := yamlfile.Lookup(n, "apiVersion")
	return n.Kind == yaml.MappingNode && hasImpl && !hasAPI
}
