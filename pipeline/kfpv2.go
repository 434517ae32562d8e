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
func (v *validator) inlinePipeline(i int, n *yaml.Node) *components.Component {
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
	return sub.component()
}
