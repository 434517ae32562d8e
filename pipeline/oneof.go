package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// OutputDecl is one output a pipeline declares: a step output,
// "{{steps.STEP.outputs.NAME}}", or, written {oneOf: [REF, REF, ...]},
// the output of the first of several steps that ran, the others skipped
// by their when (KFP's dsl.OneOf of the branches of a dsl.If/Else). A step
// given a oneOf output waits for every candidate, runs when one of them
// succeeded and the others succeeded or were skipped, and is skipped when
// none ran.
type OutputDecl struct {
	// Ref is the step output, when OneOf is empty.
	Ref string
	// OneOf are the candidates, in order.
	OneOf []string
	// bad is set on a value of neither form; outputsDecl reports it.
	bad bool
}

// UnmarshalYAML implements yaml.Unmarshaler: a string, or {oneOf: [...]};
// anything else is left for the loader to report at its position.
func (o *OutputDecl) UnmarshalYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode:
		o.Ref = n.Value
	case n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "oneOf" && n.Content[1].Kind == yaml.SequenceNode:
		for _, e := range n.Content[1].Content {
			if e.Kind != yaml.ScalarNode {
				o.bad = true
				return nil
			}
			o.OneOf = append(o.OneOf, e.Value)
		}
	default:
		o.bad = true
	}
	return nil
}

// MarshalYAML implements yaml.Marshaler, as UnmarshalYAML reads it.
func (o OutputDecl) MarshalYAML() (any, error) {
	if len(o.OneOf) > 0 {
		return map[string][]string{"oneOf": o.OneOf}, nil
	}
	return o.Ref, nil
}

// OneOf returns the candidates of input name of the step, when it is
// given a nested pipeline's oneOf output (see OutputDecl): the step
// outputs, the first whose step ran being the value; nil otherwise.
func (s *Step) OneOf(name string) []Binding { return s.oneOf[name] }

// OneOfGroups are the step names of the candidates of each input of the
// step given a oneOf output, by input in name order.
func (s *Step) OneOfGroups() [][]string {
	var out [][]string
	for _, name := range slices.Sorted(maps.Keys(s.oneOf)) {
		var g []string
		for _, b := range s.oneOf[name] {
			g = append(g, b.Step)
		}
		out = append(out, g)
	}
	return out
}

// outputOneOf checks declared output name, a oneOf (decl.OneOf set): each
// candidate a step output that outputDeclRef accepts, of two or more
// distinct steps, all of one type. It returns the candidates.
func (v *validator) outputOneOf(name string, decl OutputDecl, index map[string]int) ([]Binding, bool) {
	path := p("outputs", name, "oneOf")
	if len(decl.OneOf) < 2 {
		v.atValue(path, "expected two or more step outputs, the first of whose steps that ran gives the output")
		return nil, false
	}
	var out []Binding
	seen := map[string]bool{}
	typ := ""
	for i, ref := range decl.OneOf {
		b, ok := v.outputDeclRef(append(slices.Clone(path), i), name, ref, index)
		if !ok {
			return nil, false
		}
		if seen[b.Step] {
			v.atValue(append(slices.Clone(path), i), "step %q is a candidate twice: expected outputs of distinct steps", b.Step)
			return nil, false
		}
		seen[b.Step] = true
		if s := v.p.Step(b.Step); s != nil && s.Loop != nil {
			v.atValue(append(slices.Clone(path), i), "output %q names loop step %q: a oneOf candidate is one value (the outputs of a loop step are collected)", name, b.Step)
			return nil, false
		}
		if s := v.p.Step(b.Step); s != nil && s.Resolved != nil {
			o, _ := s.Resolved.Output(b.Output)
			if typ != "" && o.Type != typ {
				v.atValue(append(slices.Clone(path), i), "output %q of step %q is %s, the first candidate's is %s: the candidates of a oneOf are of one type", b.Output, b.Step, o.Type, typ)
				return nil, false
			}
			typ = o.Type
		}
		out = append(out, b)
	}
	return out, true
}

// alts are the candidates a whole reference b of the pipeline being
// expanded stands for, in the expanded steps' names: b is a oneOf output
// of a nested step, or a param given one; nil otherwise.
func (r *rewriter) alts(b Binding) []Binding {
	if b.Param != "" {
		return r.paramAlts[b.Param]
	}
	sub := r.subs[b.Step]
	if sub == nil || sub.oneOf[b.Output] == nil {
		return nil
	}
	var out []Binding
	for _, a := range sub.oneOf[b.Output] {
		out = append(out, Binding{Step: b.Step + NestedSep + a.Step, Output: a.Output})
	}
	return out
}

// nodeAlts are the candidates input value n stands for (see alts), when it
// is a whole reference; an error when it embeds a oneOf output in a
// longer text.
func (r *rewriter) nodeAlts(n *yaml.Node) ([]Binding, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return nil, nil
	}
	if b, _, err := parseBinding(n.Value); err == nil && b.IsRef() {
		return r.alts(b), nil
	}
	_, refs, err := parseRefs(n.Value)
	if err != nil {
		return nil, nil
	}
	for _, ref := range refs {
		if a := r.alts(Binding{Param: ref.param, Step: ref.step, Output: ref.output}); a != nil {
			return nil, fmt.Errorf("%s is the output of the first of several steps that ran (oneOf): it can only be given whole", strings.TrimSpace(ref.String()))
		}
	}
	return nil, nil
}

// stepAlts rewrites the oneOf candidates of step s (the expanded steps of
// a nested pipeline keep theirs, prefixed) and sets those of its inputs
// given a oneOf output whole; inputs are s's inputs before rewriting.
func (r *rewriter) stepAlts(s *Step, inputs map[string]yaml.Node) error {
	out := map[string][]Binding{}
	for name, alts := range s.oneOf {
		for _, a := range alts {
			out[name] = append(out[name], r.output(a))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		n := inputs[name]
		alts, err := r.nodeAlts(&n)
		if err != nil {
			return fmt.Errorf("step %s: input %q: %w", s.Name, name, err)
		}
		if alts != nil {
			out[name] = alts
		}
	}
	s.oneOf = nil
	if len(out) > 0 {
		s.oneOf = out
	}
	return nil
}

// outputAlts are the candidates of output b of the pipeline being
// expanded, declared (decl) or given by a nested step's oneOf output, in
// the expanded steps' names; nil for a plain output.
func (r *rewriter) outputAlts(b Binding, decl []Binding) []Binding {
	if decl == nil {
		return r.alts(b)
	}
	var out []Binding
	for _, d := range decl {
		if a := r.alts(d); a != nil {
			out = append(out, a...)
			continue
		}
		out = append(out, r.output(d))
	}
	return out
}

// whole reports a reference b to a oneOf output (see alts) used where
// (a condition, a text, loop items) only one step's output can be: only
// an input takes one, whole.
func (r *rewriter) whole(b Binding, where string) error {
	if !b.IsRef() || r.alts(b) == nil {
		return nil
	}
	return fmt.Errorf("%s is the output of the first of several steps that ran (oneOf): %s cannot use it (give it whole to an input)", b, where)
}
