package pipeline

import (
	"fmt"

	"pipectl.dev/pipectl/components"
)

// outputsDecl checks the pipeline's outputs: each a whole reference to an
// output of a step that is not a finally step, or a oneOf of outputs of
// steps that are not loop steps either.
func (v *validator) outputsDecl(index map[string]int) {
	pl := v.p
	pl.outputs, pl.oneOf = map[string]Binding{}, map[string][]Binding{}
	for _, name := range pl.OutputOrder {
		path := p("outputs", name)
		if want := components.ValidIdent(name); want != "" {
			v.at(path, "invalid output name %q: expected %s", name, want)
			continue
		}
		decl := pl.Outputs[name]
		switch {
		case decl.bad:
			v.atValue(path, "expected a step output \"{{steps.STEP.outputs.OUTPUT}}\" or {oneOf: [\"{{steps.STEP.outputs.OUTPUT}}\", ...]}")
		case len(decl.OneOf) > 0:
			if alts, ok := v.outputOneOf(name, decl, index); ok {
				pl.outputs[name], pl.oneOf[name] = alts[0], alts
			}
		default:
			if b, ok := v.outputDeclRef(path, name, decl.Ref, index); ok {
				pl.outputs[name] = b
			}
		}
	}
}

// outputDeclRef checks ref, declared output name (at path): a whole
// reference to an output of a step that is not a finally step (a loop
// step's output is collected: a JSON list, or a directory of the
// iterations' artifacts).
func (v *validator) outputDeclRef(path []any, name, ref string, index map[string]int) (Binding, bool) {
	pl := v.p
	b, _, err := parseBinding(ref)
	if err == nil && b.Step == "" {
		err = fmt.Errorf("expected a step output \"{{steps.STEP.outputs.OUTPUT}}\", got %s", quoteShort(ref))
	}
	if err != nil {
		v.atValue(path, "%v", err)
		return Binding{}, false
	}
	j, ok := index[b.Step]
	if !ok {
		v.atValue(path, "unknown step %q (steps: %s)", b.Step, v.stepNames())
		return Binding{}, false
	}
	s := &pl.Steps[j]
	switch {
	case s.Finally:
		v.atValue(path, "output %q names finally step %q: a pipeline's outputs come from its other steps", name, b.Step)
	case s.Resolved == nil:
	default:
		if _, ok := s.Resolved.Output(b.Output); !ok {
			v.atValue(path, "step %q (component %s) has no output %q (outputs: %s)", b.Step, s.Resolved.Metadata.Name, b.Output, ioNames(s.Resolved.Outputs))
			return Binding{}, false
		}
		return b, true
	}
	return Binding{}, false
}
