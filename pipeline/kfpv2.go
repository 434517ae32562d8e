package pipeline

import (
	"errors"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/kfpv2"
)

// parseKFPv2 loads a KFP v2 pipeline file (the IR kfp.compiler writes) as
// the pipectl pipeline package kfpv2 writes it as. Errors point into the
// KFP file, with KFP's field paths where the pipeline's node comes from one.
func parseKFPv2(path string, data []byte) (*Pipeline, error) {
	kf, err := kfpv2.Parse(path, data)
	if err != nil {
		return nil, err
	}
	res, err := kfpv2.Convert(kf)
	if err != nil {
		return nil, err
	}
	p, err := decode(&yamlfile.File{Path: path, Root: res.Root}, nil)
	if err != nil {
		return nil, translateKFPv2(res, path, err)
	}
	return p, nil
}

// translateKFPv2 rewrites the field paths of errors in the KFP file to the
// KFP fields their positions are.
func translateKFPv2(res *kfpv2.Result, path string, err error) error {
	var out []error
	for _, e := range yamlfile.Split(err) {
		var ye *yamlfile.Error
		if errors.As(e, &ye) && ye.File == path {
			if f, ok := res.Field(ye.Line, ye.Column); ok {
				t := *ye
				t.Field = f
				e = &t
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// inlinePipeline loads the pipeline written inline as steps[i].component
// (n, a mapping with kind: Pipeline, as a KFP v2 sub-DAG is written) and
// returns the component it is to the step, as subPipeline does for a file.
// A pipeline written once and used by several steps (a KFP sub-DAG each
// of whose uses is the same node) is loaded once, as a file is: loading
// it per use made a file of sub-DAGs that each use the next twice load
// 2^depth of them before any bound was reached.
func (v *validator) inlinePipeline(i int, n *yaml.Node) *components.Component {
	// A step holds a copy of its component's node; the copies of one
	// share their contents.
	id := n
	if len(n.Content) > 0 {
		id = n.Content[0]
	}
	if d, ok := v.inline[id]; ok {
		if d.sub != nil {
			v.subs[i] = d.sub
		}
		return d.c
	}
	v.inline[id] = inlineDecoded{} // in error until it loads
	if len(v.chain) >= MaxNestingDepth {
		v.atValue(v.sp(i, "component"), "pipelines nested more than %d deep in %s: this step's inline pipeline (a KFP sub-DAG) would be level %d (expected at most %d levels of pipelines used as step components)", MaxNestingDepth, v.f.Path, len(v.chain)+1, MaxNestingDepth)
		return nil
	}
	sub, err := decode(&yamlfile.File{Path: v.f.Path, Root: n}, v.chain)
	if err != nil {
		v.errs = append(v.errs, err)
		return nil
	}
	for _, s := range sub.Steps {
		if s.Finally {
			v.atValue(v.sp(i, "component"), "pipeline %s has finally steps: a pipeline used as a step's component cannot have them", sub.Metadata.Name)
			return nil
		}
	}
	v.subs[i] = sub
	c := sub.component()
	v.inline[id] = inlineDecoded{sub, c}
	return c
}

// inlineDecoded is an inline pipeline loaded: nil when it is in error.
type inlineDecoded struct {
	sub *Pipeline
	c   *components.Component
}
