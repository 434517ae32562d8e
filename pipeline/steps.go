package pipeline

import (
	"maps"
	"slices"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
)

// step validates one step's inputs, references and options.
func (v *validator) step(i int, index map[string]int) {
	s := &v.p.Steps[i]
	items := v.loop(i, index)
	v.inputs(i, index, items)
	v.after(i, index)
	v.when(i, index)
	v.trigger(i)
	if s.Retries < 0 || s.Retries > MaxRetries {
		v.atValue(v.sp(i, "retries"), "expected 0 to %d, got %d", MaxRetries, s.Retries)
	}
	v.env(i, index, items)
	v.secrets(i, index)
	v.resources(i, v.sp(i, "resources"), s.Resources, index)
	v.tolerations(v.sp(i, "tolerations"), s.Tolerations)
	v.podMetadata(i)
	v.distributed(i, index)
	v.image(i)
}

// inputs checks the inputs steps[i] gives its component (items: its loop's
// items, when the file gives them): each one the component has, of a type
// it takes, and every required one given.
func (v *validator) inputs(i int, index map[string]int, items []string) {
	s := &v.p.Steps[i]
	c := s.Resolved
	if c == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.Inputs)) {
		v.input(i, name, index, items)
	}
	for _, in := range c.Inputs {
		if _, given := s.Inputs[in.Name]; !given && in.Required() {
			v.at(v.sp(i), "step %q does not give component %s its required input %q (%s)", s.Name, c.Metadata.Name, in.Name, in.Type)
		}
	}
}

// input checks input name of steps[i], whose component is resolved: a
// param, a step output or a value of the type the input takes.
func (v *validator) input(i int, name string, index map[string]int, items []string) {
	s := &v.p.Steps[i]
	c := s.Resolved
	node := s.Inputs[name]
	path := v.sp(i, "inputs", name)
	in, ok := c.Input(name)
	if !ok {
		v.at(path, "component %s has no input %q (inputs: %s)", c.Metadata.Name, name, ioNames(c.Inputs))
		return
	}
	vt := in.ValueType()
	b, refs, err := bindingOf(&node, vt)
	if err != nil {
		v.atValue(path, "%v", err)
		return
	}
	v.checkRefs(path, refs, index, i)
	v.checkItems(path, refs, items)
	switch {
	case b.Param != "":
		v.inputParam(path, name, in, b)
	case b.Step != "":
		v.inputOutput(path, name, in, b)
	case vt == "":
		v.atValue(path, "input %q is an artifact (%s): expected a step output such as \"{{steps.STEP.outputs.OUTPUT}}\"", name, in.Type)
	default:
		v.artifactParams(path, refs)
		v.embeddedOutputs(path, refs)
		if len(refs) == 0 {
			if _, err := components.NodeValue(vt, &node); err != nil {
				v.atValue(path, "input %q: %v", name, err)
			}
		}
	}
}

// inputParam checks that param b.Param, given whole to input in (name, at
// path), is of a type the input takes.
func (v *validator) inputParam(path []any, name string, in components.IO, b Binding) {
	prm, ok := v.p.Params[b.Param]
	switch {
	case !ok:
	case prm.kfp != nil:
		if !kfpv1.Compatible(*prm.kfp, in) {
			v.atValue(path, "type mismatch: input %q of the graph is %s, input %q expects %s", b.Param, kfpv1.TypeName(*prm.kfp), name, kfpv1.TypeName(in))
		}
	case components.IsArtifact(prm.Type):
		if !components.IsArtifact(in.Type) && in.Declared == nil || !kfpv1.Compatible(components.IO{Name: b.Param, Type: prm.Type}, in) {
			v.atValue(path, "type mismatch: parameter %q is an artifact (%s), input %q expects %s", b.Param, prm.Type, name, kfpv1.TypeName(in))
		}
	case in.ValueType() == "" || !components.Assignable(prm.Type, in.ValueType()):
		v.atValue(path, "type mismatch: parameter %q is %s, input %q expects %s", b.Param, prm.Type, name, in.Type)
	}
}

// inputOutput checks that step output b, given whole to input in (name,
// at path), is of a type the input takes: a loop step's output collected.
func (v *validator) inputOutput(path []any, name string, in components.IO, b Binding) {
	out, ok := v.output(b.Step, b.Output)
	switch {
	case !ok:
	case v.loops(b.Step) && components.IsArtifact(out.Type) && !components.IsArtifact(in.Type):
		v.atValue(path, "output %q of loop step %q is collected into a directory of its iterations' outputs: input %q (%s) expects a single value", b.Output, b.Step, name, kfpv1.TypeName(in))
	case v.loops(b.Step) && !components.IsArtifact(out.Type) && !kfpv1.Compatible(components.IO{Name: out.Name, Type: components.TypeJSON}, in):
		v.atValue(path, "type mismatch: output %q of loop step %q is collected into a JSON list (json), input %q expects %s (a single value)", b.Output, b.Step, name, kfpv1.TypeName(in))
	case !v.loops(b.Step) && !kfpv1.Compatible(out, in):
		v.atValue(path, "type mismatch: output %q of step %q is %s, input %q expects %s", b.Output, b.Step, kfpv1.TypeName(out), name, kfpv1.TypeName(in))
	}
}

// after checks steps[i].after: steps of the pipeline, not itself, on the
// same side of the finally boundary.
func (v *validator) after(i int, index map[string]int) {
	s := &v.p.Steps[i]
	for j, a := range s.After {
		k, ok := index[a]
		switch {
		case !ok:
			v.atValue(v.sp(i, "after", j), "unknown step %q (steps: %s)", a, v.stepNames())
		case a == s.Name:
			v.atValue(v.sp(i, "after", j), "a step cannot run after itself")
		default:
			v.checkFinally(v.sp(i, "after", j), i, k)
		}
	}
}

// embeddedOutputs reports step outputs inside a longer text that cannot
// be there: an artifact, and a loop step's outputs (collected, they are a
// whole JSON list or directory).
func (v *validator) embeddedOutputs(path []any, refs []ref) {
	for _, r := range refs {
		if r.step == "" {
			continue
		}
		out, ok := v.output(r.step, r.output)
		switch {
		case !ok:
		case components.IsArtifact(out.Type):
			v.atValue(path, "output %q of step %q is an artifact (%s): it can only be given whole to an input, as \"{{steps.%s.outputs.%s}}\"", r.output, r.step, out.Type, r.step, r.output)
		case v.loops(r.step):
			v.atValue(path, "output %q of loop step %q is collected into a JSON list: it can only be given whole to an input, as \"{{steps.%s.outputs.%s}}\"", r.output, r.step, r.step, r.output)
		}
	}
}

// artifactParams reports references to artifact parameters (of a pipeline
// used as a component) other than a whole input value.
func (v *validator) artifactParams(path []any, refs []ref) {
	for _, r := range refs {
		if prm, ok := v.p.Params[r.param]; ok && components.IsArtifact(prm.Type) {
			v.atValue(path, "parameter %q is an artifact (%s): it can only be given whole to an artifact input, as \"{{params.%s}}\"", r.param, prm.Type, r.param)
		}
	}
}

// bindingOf reads a step input value node.
func bindingOf(n *yaml.Node, inType string) (Binding, []ref, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		return parseBinding(n.Value)
	}
	val, err := components.NodeValue(inType, n)
	if err != nil {
		return Binding{}, nil, err
	}
	return Binding{Literal: val}, nil, nil
}

// Bindings returns the parsed inputs of a step of a loaded pipeline, by input name.
func (s *Step) Bindings() map[string]Binding {
	out := map[string]Binding{}
	for name, n := range s.Inputs {
		t := components.TypeString
		if s.Resolved != nil {
			if in, ok := s.Resolved.Input(name); ok {
				t = in.ValueType()
			}
		}
		b, _, err := bindingOf(&n, t)
		if err == nil {
			out[name] = b
		}
	}
	return out
}
