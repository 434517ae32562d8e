package pipeline

import (
	"maps"
	"slices"
)

// trigger checks steps[i].trigger and, for a step that runs once the steps
// it depends on ended whatever their outcome (trigger: completed), what it
// reads of them: an output of such a step may not be there, so the step
// takes outputs whole, each into an input with a default (or optional),
// which the input has instead when that step did not succeed, and reads
// them nowhere else (in a longer text, a when, its loop's items, a Secret's
// name, its resources), nor the collected outputs of a loop step.
func (v *validator) trigger(i int) {
	s := &v.p.Steps[i]
	switch s.Trigger {
	case "", TriggerSucceeded:
		return
	case TriggerCompleted:
	default:
		v.atValue(v.sp(i, "trigger"), "unknown trigger %q (expected %s, the default: the step runs once every step it depends on succeeded; or %s: once each of them ended, whatever its outcome)", s.Trigger, TriggerSucceeded, TriggerCompleted)
		return
	}
	const why = "a step with trigger: completed runs even when the steps it depends on did not succeed"
	if c := s.Resolved; c != nil {
		for _, name := range slices.Sorted(maps.Keys(s.Inputs)) {
			in, ok := c.Input(name)
			if !ok {
				continue // reported by step
			}
			node := s.Inputs[name]
			b, refs, err := bindingOf(&node, in.ValueType())
			if err != nil {
				continue // reported by step
			}
			path := v.sp(i, "inputs", name)
			switch {
			case b.Step != "" && v.loops(b.Step):
				v.atValue(path, "input %q is given the outputs of loop step %q collected from its iterations: not supported on a step with trigger: completed (%s; give it an output of a step that does not loop)", name, b.Step, why)
			case b.Step != "" && in.Required():
				v.atValue(path, "input %q is given output %q of step %q, which is not there when that step did not succeed: %s, and the input then takes its default; expected a default (or optional: true) on input %q of component %s", name, b.Output, b.Step, why, name, c.Metadata.Name)
			case b.Step == "":
				for _, r := range refs {
					if r.step != "" {
						v.atValue(path, "{{steps.%s.outputs.%s}} inside a text: %s, and that output may not be there; give it whole to an input with a default", r.step, r.output, why)
						break
					}
				}
			}
		}
	}
	if s.When != "" {
		if _, refs, err := ParseWhen(s.When); err == nil {
			for _, r := range refs {
				if r.step != "" {
					v.atValue(v.sp(i, "when"), "the condition reads output %q of step %q: %s, and that output may not be there (compare params only)", r.output, r.step, why)
					break
				}
			}
		}
	}
	if s.Loop != nil {
		if b, err := s.ItemsBinding(); err == nil && b.Step != "" {
			v.atValue(v.sp(i, "loop", "items"), "the items are output %q of step %q: %s, and that output may not be there (loop over a list or a param)", b.Output, b.Step, why)
		}
	}
	for j, sec := range s.Secrets {
		if b := sec.Ref(); b.Step != "" {
			v.atValue(v.sp(i, "secrets", j, "secret"), "the Secret's name is output %q of step %q: %s, and that output may not be there", b.Output, b.Step, why)
		}
	}
	for _, f := range RuntimeFields {
		if b, ok := s.Resources.Refs()[f]; ok && b.Step != "" {
			v.atValue(v.sp(i, "resources", f), "the value is output %q of step %q: %s, and that output may not be there", b.Output, b.Step, why)
		}
	}
}
