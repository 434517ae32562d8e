package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// chainLink is one pipeline file being loaded: its path as given and as an
// absolute path (which recursion is checked on).
type chainLink struct {
	path, abs string
	// runtimes are those the file's steps may name (and the pipelines they use).
	runtimes *trainer.Set
}

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return filepath.Clean(a)
	}
	return filepath.Clean(path)
}

// isPipeline reports whether a file's root is a pipeline (kind: Pipeline).
func isPipeline(root *yaml.Node) bool {
	n, _, ok := yamlfile.Lookup(root, "kind")
	return ok && n.Kind == yaml.ScalarNode && n.Value == "Pipeline"
}

// isComponentFile reports whether a file's root is that of a pipeline or
// component file: apiVersion pipectl.dev/v1alpha1, or a KFP component (an
// implementation and no apiVersion).
func isComponentFile(root *yaml.Node) bool {
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	if n, _, ok := yamlfile.Lookup(root, "apiVersion"); ok {
		return n.Kind == yaml.ScalarNode && n.Value == components.APIVersion
	}
	_, _, ok := yamlfile.Lookup(root, "implementation")
	return ok
}

// NestedSep joins a step that uses a pipeline and a step of that pipeline
// into the name of the expanded step: OUTER.INNER (step names never hold it).
const NestedSep = "."

// MaxNestingDepth bounds how deep pipelines (and KFP graphs) use each
// other as step components: the outermost file counts as 1.
const MaxNestingDepth = 32

// MaxStepNameLen bounds the name of a nested pipeline's expanded step
// (OUTER.INNER, any depth): it becomes a directory of the store and of the
// work directory (STEP[i] for a loop's iteration, within a file name's 255
// bytes) and an Argo DAG task's name (at most 128 characters, with "step-"
// before a leading digit).
const MaxStepNameLen = 120

// MaxNestedSteps bounds the steps that nested pipelines add to one
// pipeline when they are expanded. Pipelines that each use the next one
// twice double at every level: without a bound 25 levels are 33 million
// steps and memory until the kernel kills the process. A pipeline's own
// steps are not counted.
const MaxNestedSteps = 10000

// tooDeep reports (at steps[i].component) whether using the pipeline at
// path (a KFP graph's file, or "" when inline) would nest more than
// MaxNestingDepth deep.
func (v *validator) tooDeep(i int, path string) bool {
	if len(v.chain) < MaxNestingDepth {
		return false
	}
	name := path
	if name == "" {
		name = "an inline graph"
	}
	v.atValue(v.sp(i, "component"), "pipelines nested more than %d deep: %s uses %s (expected at most %d levels of pipelines used as step components)", MaxNestingDepth, v.chainNames(), name, MaxNestingDepth)
	if path != "" {
		v.loaded[path] = nil
	}
	return true
}

// chainNames is the chain of pipeline files being loaded, "A uses B uses
// C"; inline pipelines in one file are its levels, "A (3 levels)".
func (v *validator) chainNames() string {
	var names []string
	for k := 0; k < len(v.chain); {
		n := 1
		for k+n < len(v.chain) && v.chain[k+n].path == v.chain[k].path {
			n++
		}
		name := v.chain[k].path
		if n > 1 {
			name += fmt.Sprintf(" (%d levels)", n)
		}
		names = append(names, name)
		k += n
	}
	return strings.Join(names, " uses ")
}

// subPipeline loads the pipeline file f that steps[i] uses as its component
// and returns the component it is to the step: its params as inputs, its
// outputs as outputs.
func (v *validator) subPipeline(i int, f *yamlfile.File, path string) *components.Component {
	if v.recursive(i, path) || v.tooDeep(i, path) {
		return nil
	}
	return v.subPipelineIn(i, f, path, v.chain[len(v.chain)-1].runtimes)
}

// subPipelineIn is subPipeline, the steps of f naming runtimes of set.
func (v *validator) subPipelineIn(i int, f *yamlfile.File, path string, set *trainer.Set) *components.Component {
	sub, err := decodeIn(f, v.chain, nil, set)
	if err != nil {
		v.errs = append(v.errs, err)
		v.loaded[path] = nil
		return nil
	}
	if slices.ContainsFunc(sub.Steps, func(s Step) bool { return s.Finally }) {
		v.atValue(v.sp(i, "component"), "pipeline %s (%s) has finally steps: a pipeline used as a step's component cannot have them (move them to the outer pipeline)", sub.Metadata.Name, path)
		v.loaded[path] = nil
		return nil
	}
	v.addWarnings(sub.Warnings)
	c := sub.component()
	v.loaded[path], v.subFiles[path], v.subs[i] = c, sub, sub
	return c
}

// component is the pipeline as a step's component: its params are the
// inputs (a default makes one optional), its declared outputs the outputs,
// typed as the inner outputs they name.
func (pl *Pipeline) component() *components.Component {
	c := &components.Component{APIVersion: components.APIVersion, Kind: "Component", Metadata: pl.Metadata, Source: pl.Source, Dir: filepath.Dir(pl.Source)}
	for _, name := range pl.ParamOrder {
		prm := pl.Params[name]
		c.Inputs = append(c.Inputs, components.IO{Name: name, Type: prm.Type, Description: prm.Description, Default: prm.Default})
	}
	for _, name := range pl.OutputOrder {
		b := pl.outputs[name]
		if s := pl.Step(b.Step); s != nil && s.Resolved != nil {
			if out, ok := s.Resolved.Output(b.Output); ok {
				out.Name, out.Path = name, ""
				if s.Loop != nil && !components.IsArtifact(out.Type) {
					// A loop step's output, collected: a JSON list.
					out.Type, out.Declared = components.TypeJSON, nil
				}
				c.Outputs = append(c.Outputs, out)
			}
		}
	}
	return c
}

// Output returns the step output that the pipeline's declared output name
// is, in its expanded Steps.
func (pl *Pipeline) Output(name string) (Binding, bool) {
	b, ok := pl.outputs[name]
	return b, ok
}

// nestedStep refuses the options a step whose component is a pipeline
// cannot take: they belong to the steps of that pipeline.
func (v *validator) nestedStep(i int) {
	s := &v.p.Steps[i]
	refuse := func(field string, set bool) {
		if set {
			v.at(v.sp(i, field), "step %q uses pipeline %s as its component: %s is not supported on such a step (set it on the steps of that pipeline)", s.Name, s.Resolved.Metadata.Name, field)
		}
	}
	if s.Loop != nil {
		v.loopedPipeline(i)
	}
	refuse("retries", s.Retries != 0)
	refuse("timeout", s.Timeout.Duration != 0)
	refuse("image", s.Image != "")
	refuse("env", len(s.Env) > 0)
	refuse("secrets", len(s.Secrets) > 0)
	refuse("resources", s.Resources != nil)
	refuse("nodeSelector", len(s.NodeSelector) > 0)
	refuse("tolerations", len(s.Tolerations) > 0)
	refuse("podMetadata", s.PodMetadata != nil)
	refuse("distributed", s.Distributed != nil)
	refuse("trigger", s.AfterCompleted())
}

// loopedPipeline refuses, at steps[i].loop, what a pipeline that a loop
// step uses as its component cannot hold: each of its steps loops over
// the step's items, so none of them loops over a pipeline of its own or is
// a finally step (a loop step of it loops over the product: see expand).
func (v *validator) loopedPipeline(i int) {
	s, sub := &v.p.Steps[i], v.subs[i]
	for _, t := range sub.Steps {
		switch {
		case t.Loop != nil && t.Body != "":
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, and its step %s loops over the steps of %s of its own: a looped pipeline inside a looped pipeline is not supported yet (loop its steps over the product of both lists)", s.Name, sub.Source, t.Name, t.Body)
			return
		case t.Finally:
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, which has finally steps (%s): a looped pipeline's steps run once per item, finally steps once per run (move them to the finally steps of this pipeline)", s.Name, sub.Source, t.Name)
			return
		case t.AfterCompleted():
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, whose step %s has trigger: completed: not supported in a looped pipeline yet (its iterations would each wait for the other steps' iterations, whatever their outcome)", s.Name, sub.Source, t.Name)
			return
		case t.Distributed != nil && t.When != "":
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, whose distributed step %s has a when: not supported in a looped pipeline (the condition would hold iteration by iteration, and a distributed step's launcher starts the gang of each iteration)", s.Name, sub.Source, t.Name)
			return
		}
	}
}

// addWarnings adds the warnings ws (of a file a step uses) to the
// pipeline's, each once.
func (v *validator) addWarnings(ws []string) {
	for _, w := range ws {
		if !slices.Contains(v.p.Warnings, w) {
			v.p.Warnings = append(v.p.Warnings, w)
		}
	}
}
