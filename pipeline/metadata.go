package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
)

// The metadata of an artifact param (Param.Metadata, KFP's importer
// metadata) may embed step outputs, "{{steps.STEP.outputs.OUTPUT}}", in
// its strings, keys and values (KFP: a dsl.importer whose metadata holds a
// task's output). The import itself still happens before any step runs;
// the metadata is filled in when a step reading the param starts, so each
// such step waits for STEP (Step.Deps), and gets the output's value as
// written in its executor input (and fingerprint). An output is an output
// parameter of a step that is neither a loop step (its outputs are
// collected, a whole JSON list) nor a finally step (the steps reading the
// param run before it), and not a oneOf output of a nested pipeline (a
// text holds one step's output); a step reading the param cannot be STEP
// itself, nor a finally step (finally steps wait for no other step).

// metaRef is one step output the metadata of an artifact param embeds, at
// node (of field).
type metaRef struct {
	node  *yaml.Node
	field string
	out   Binding
}

// checkMetadataSteps checks the step outputs the artifact params' metadata
// embed (v.metaRefs) and the steps reading those params, then links each
// such step to the steps it waits for (linkMetadata).
func (v *validator) checkMetadataSteps(index map[string]int) {
	for _, name := range slices.Sorted(maps.Keys(v.metaRefs)) {
		for _, r := range v.metaRefs[name] {
			j, ok := index[r.out.Step]
			if !ok {
				v.errs = append(v.errs, v.f.Errorf(r.node, r.field, "unknown step %q in %s (steps: %s)", r.out.Step, r.out, v.stepNames()))
				continue
			}
			s := &v.p.Steps[j]
			switch {
			case s.Finally:
				v.errs = append(v.errs, v.f.Errorf(r.node, r.field, "%s is an output of finally step %q: the steps reading artifact parameter %q run before finally steps", r.out, r.out.Step, name))
			case s.Loop != nil:
				v.errs = append(v.errs, v.f.Errorf(r.node, r.field, "output %q of loop step %q is collected into a JSON list: an artifact parameter's metadata embeds single values", r.out.Output, r.out.Step))
			case s.Resolved == nil:
			default:
				out, ok := s.Resolved.Output(r.out.Output)
				switch {
				case !ok:
					v.errs = append(v.errs, v.f.Errorf(r.node, r.field, "step %q (component %s) has no output %q (outputs: %s)", r.out.Step, s.Resolved.Metadata.Name, r.out.Output, ioNames(s.Resolved.Outputs)))
				case components.IsArtifact(out.Type):
					v.errs = append(v.errs, v.f.Errorf(r.node, r.field, "output %q of step %q is an artifact (%s): an artifact parameter's metadata embeds output parameters (values)", r.out.Output, r.out.Step, out.Type))
				}
			}
		}
	}
	for i := range v.p.Steps {
		s := &v.p.Steps[i]
		binds := s.Bindings()
		for _, in := range slices.Sorted(maps.Keys(binds)) {
			b := binds[in]
			for _, r := range v.metaRefs[b.Param] {
				j, ok := index[r.out.Step]
				switch {
				case !ok:
				case j == i:
					v.atValue(v.sp(i, "inputs", in), "step %q reads artifact parameter %q, whose metadata embeds its own output %q (%s): a step cannot wait for itself", s.Name, b.Param, r.out.Output, r.field)
				case s.Finally && !v.p.Steps[j].Finally:
					v.atValue(v.sp(i, "inputs", in), "finally step %q reads artifact parameter %q, whose metadata embeds output %q of step %q (%s): finally steps run after the other steps whatever their outcome, waiting for none of them", s.Name, b.Param, r.out.Output, r.out.Step, r.field)
				}
			}
		}
	}
	v.p.linkMetadata()
}

// linkMetadata sets each step's metaDeps: the steps whose outputs the
// metadata of the artifact params it reads embeds.
func (pl *Pipeline) linkMetadata() {
	outs := map[string][]string{}
	for name, prm := range pl.Params {
		if steps := metadataSteps(&prm.Metadata); len(steps) > 0 {
			outs[name] = steps
		}
	}
	for i := range pl.Steps {
		s := &pl.Steps[i]
		s.metaDeps = nil
		if len(outs) == 0 {
			continue
		}
		set := map[string]bool{}
		for _, b := range s.Bindings() {
			for _, d := range outs[b.Param] {
				set[d] = true
			}
		}
		if len(set) > 0 {
			s.metaDeps = slices.Sorted(maps.Keys(set))
		}
	}
}

// metadataSteps are the steps whose outputs the strings of metadata n
// embed, sorted.
func metadataSteps(n *yaml.Node) []string {
	set := map[string]bool{}
	eachString(n, func(n *yaml.Node) {
		if _, refs, err := parseRefs(n.Value); err == nil {
			for _, r := range refs {
				if r.step != "" {
					set[r.step] = true
				}
			}
		}
	})
	return slices.Sorted(maps.Keys(set))
}

// eachString calls f with each string scalar in n, keys included.
func eachString(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind != yaml.ScalarNode {
		for _, c := range n.Content {
			eachString(c, f)
		}
		return
	}
	if n.ShortTag() == "!!str" {
		f(n)
	}
}

// expandMetadata rewrites the step outputs the metadata of the pipeline's
// artifact params embed into the expanded steps' (a nested pipeline's
// output is an output of one of its steps), once expand has rewritten the
// steps: an output given by a oneOf, or collected from a loop step of the
// nested pipeline, is an error at the param's metadata.
func (v *validator) expandMetadata(outer *rewriter, steps []Step) {
	pl := v.p
	for _, name := range pl.ParamOrder {
		if len(v.metaRefs[name]) == 0 {
			continue
		}
		prm := pl.Params[name]
		path := p("params", name, "metadata")
		var bad error
		var rewrite func(n *yaml.Node) *yaml.Node
		rewrite = func(n *yaml.Node) *yaml.Node {
			cp := *n
			cp.Content = nil
			for _, c := range n.Content {
				cp.Content = append(cp.Content, rewrite(c))
			}
			if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || !strings.Contains(n.Value, "{{") || bad != nil {
				return &cp
			}
			_, refs, err := parseRefs(n.Value)
			if err != nil {
				bad = err
				return &cp
			}
			for _, r := range refs {
				if r.step == "" {
					continue
				}
				if err := outer.whole(Binding{Step: r.step, Output: r.output}, "an artifact parameter's metadata"); err != nil {
					bad = err
					return &cp
				}
				out := outer.output(Binding{Step: r.step, Output: r.output})
				if k := slices.IndexFunc(steps, func(s Step) bool { return s.Name == out.Step }); k >= 0 && steps[k].Loop != nil {
					bad = fmt.Errorf("%s is output %q of loop step %q (of the pipeline step %q uses), collected into a JSON list: an artifact parameter's metadata embeds single values", Binding{Step: r.step, Output: r.output}, out.Output, out.Step, r.step)
					return &cp
				}
			}
			if cp.Value, err = outer.text(n.Value); err != nil {
				bad = err
			}
			return &cp
		}
		meta := rewrite(&prm.Metadata)
		if bad != nil {
			v.atValue(path, "%v", bad)
			continue
		}
		prm.Metadata = *meta
		pl.Params[name] = prm
	}
}

// checkMetadata checks the metadata of artifact param name (Param.Metadata):
// a mapping of the pipeline run itself, JSON, whose strings embed only
// {{params.NAME}} of parameters that are values and step outputs (kept in
// v.metaRefs for checkMetadataSteps).
func (v *validator) checkMetadata(name string, prm Param) {
	path := p("params", name, "metadata")
	field := components.FieldPath(path...)
	switch {
	case len(v.chain) > 1:
		v.at(path, "artifact parameter %q of a pipeline used as a step's component cannot have metadata: the step that uses this pipeline gives it an artifact", name)
		return
	case prm.Metadata.Kind != yaml.MappingNode:
		got := "a " + components.KindName(&prm.Metadata)
		if prm.Metadata.Kind == yaml.ScalarNode {
			got = describeNode(&prm.Metadata)
		}
		v.atValue(path, "expected a mapping (the artifact's metadata), got %s", got)
		return
	}
	if _, err := components.NodeValue(components.TypeJSON, &prm.Metadata); err != nil {
		v.errs = append(v.errs, v.f.Errorf(&prm.Metadata, field, "expected the artifact's metadata as JSON: %v", err))
		return
	}
	eachString(&prm.Metadata, func(n *yaml.Node) {
		_, refs, err := LiteralParts(n.Value)
		if err != nil {
			v.errs = append(v.errs, v.f.Errorf(n, field, "%v", err))
			return
		}
		for _, r := range refs {
			if r.Step != "" {
				// Checked once the steps are known (checkMetadataSteps).
				v.metaRefs[name] = append(v.metaRefs[name], metaRef{node: n, field: field, out: Binding{Step: r.Step, Output: r.Output}})
				continue
			}
			prm, known := v.p.Params[r.Param]
			switch {
			case r.Param == "":
				v.errs = append(v.errs, v.f.Errorf(n, field, "%q: metadata may embed {{params.NAME}} and {{steps.STEP.outputs.OUTPUT}} only", n.Value))
			case !known:
				v.errs = append(v.errs, v.f.Errorf(n, field, "unknown parameter %q in {{params.%s}}", r.Param, r.Param))
			case components.IsArtifact(prm.Type):
				v.errs = append(v.errs, v.f.Errorf(n, field, "parameter %q is an artifact (%s): metadata may embed parameters that are values", r.Param, prm.Type))
			}
		}
	})
}
