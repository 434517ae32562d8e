package pipeline

import (
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
	"pipectl.dev/pipectl/components/yamlfile"
)

// kfpGraph expands the graph g of the KFP v1 graph component c that
// steps[i] uses (from the file path, "" when inline) as a nested pipeline
// (kfpv1.Graph.Pipeline writes it): the step's component stays c (KFP's
// inputs and outputs), and its steps are the graph's tasks.
func (v *validator) kfpGraph(i int, c *components.Component, g *kfpv1.Graph, path string) *components.Component {
	if (path != "" && v.recursive(i, path)) || v.tooDeep(i, path) {
		return nil
	}
	root, translate, err := g.Pipeline(c, v.chain[0].abs)
	if err != nil {
		v.errs = append(v.errs, err)
		return nil
	}
	f := &yamlfile.File{Path: g.File.Path, Root: root}
	sub, err := decodeWith(f, v.chain, func(p *Pipeline) {
		for k := range c.Inputs {
			in := c.Inputs[k]
			if prm, ok := p.Params[in.Name]; ok {
				prm.kfp = &in
				p.Params[in.Name] = prm
			}
		}
	})
	if err != nil {
		v.errs = append(v.errs, translate(err))
		return nil
	}
	if path != "" {
		v.subFiles[path] = sub
	}
	v.subs[i] = sub
	return c
}

// recursive reports (at steps[i].component) whether the file at path is
// one of the pipelines being loaded.
func (v *validator) recursive(i int, path string) bool {
	abs := absPath(path)
	for k, link := range v.chain {
		if link.abs != abs {
			continue
		}
		var names []string
		for _, l := range v.chain[k:] {
			names = append(names, l.path)
		}
		v.atValue(v.sp(i, "component"), "recursive pipeline: %s uses %s (a pipeline cannot use itself as a step's component, directly or through others)", strings.Join(names, " uses "), path)
		v.loaded[path] = nil
		return true
	}
	return false
}
