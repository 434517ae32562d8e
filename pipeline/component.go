package pipeline

import (
	"errors"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// component resolves steps[i].component.
func (v *validator) component(i int) *components.Component {
	n := yamlfile.Deref(&v.p.Steps[i].Component) // component: *name is the anchored one
	switch {
	case n.Kind == 0:
		v.at(v.sp(i), "missing: component (a path to a component file, or an inline component)")
		return nil
	case n.Kind == yaml.ScalarNode:
		if n.Value == "" {
			v.atValue(v.sp(i, "component"), "expected a path to a component file")
			return nil
		}
		path := n.Value
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(v.f.Path), path)
		}
		if c, ok := v.loaded[path]; ok {
			if sub := v.subFiles[path]; sub != nil {
				v.subs[i] = sub
			}
			return c
		}
		st, err := os.Stat(path)
		if err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			v.atValue(v.sp(i, "component"), "cannot read component file %s: %v", path, unwrapPathErr(err))
			v.loaded[path] = nil
			return nil
		}
		data, err := yamlfile.ReadBytes(path)
		if err == nil && trainer.IsTrainJobFile(data) {
			return v.trainJob(i, path, data)
		}
		var f *yamlfile.File
		if err == nil {
			f, err = yamlfile.Parse(path, data)
		}
		if err != nil {
			v.errs = append(v.errs, err)
			v.loaded[path] = nil
			return nil
		}
		if !isComponentFile(f.Root) {
			// Say nothing of what the file holds: it may be any file the
			// path reaches (../../etc/shadow), not the user's to quote.
			v.atValue(v.sp(i, "component"), "%s is not a pipeline or component file (expected apiVersion %s with kind Pipeline or Component, or a KFP component with an implementation)", path, components.APIVersion)
			v.loaded[path] = nil
			return nil
		}
		if isPipeline(f.Root) {
			return v.subPipeline(i, f, path)
		}
		c, g, err := kfpv1.Decode(f, f.Root, "")
		if err != nil {
			v.errs = append(v.errs, err)
		}
		v.loaded[path] = c
		if g != nil {
			return v.kfpGraph(i, c, g, path)
		}
		return c
	default:
		if isPipeline(n) {
			return v.inlinePipeline(i, n)
		}
		c, g, err := kfpv1.Decode(v.f, n, components.FieldPath(v.sp(i, "component")...))
		if err != nil {
			v.errs = append(v.errs, err)
			return nil
		}
		if g != nil {
			return v.kfpGraph(i, c, g, "")
		}
		return c
	}
}

// trainJob resolves steps[i].component naming the Kubeflow Trainer TrainJob
// file path (holding data): the pipeline of its one distributed step, used
// as a pipeline is, its runtimeRef looked up in the file's runtimes over
// those this pipeline's steps may name.
func (v *validator) trainJob(i int, path string, data []byte) *components.Component {
	if v.recursive(i, path) || v.tooDeep(i, path) {
		return nil
	}
	f, set, warns, err := trainJobFile(path, data, v.chain[len(v.chain)-1].runtimes)
	if err != nil {
		v.errs = append(v.errs, err)
		v.loaded[path] = nil
		return nil
	}
	v.addWarnings(warns)
	return v.subPipelineIn(i, f, path, set)
}
