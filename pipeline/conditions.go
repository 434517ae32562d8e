package pipeline

import (
	"pipectl.dev/pipectl/components"
)

// when checks steps[i].when: its references, and each comparison of
// values of a type it can compare.
func (v *validator) when(i int, index map[string]int) {
	s := &v.p.Steps[i]
	if s.When == "" {
		return
	}
	conds, refs, err := ParseWhen(s.When)
	if err != nil {
		v.atValue(v.sp(i, "when"), "%v", err)
		return
	}
	v.checkRefs(v.sp(i, "when"), refs, index, i)
	v.artifactParams(v.sp(i, "when"), refs)
	for _, r := range refs {
		if r.step != "" && v.loops(r.step) {
			v.atValue(v.sp(i, "when"), "output %q of loop step %q is collected into a JSON list: a condition compares single values", r.output, r.step)
		}
	}
	for _, c := range conds {
		v.comparison(i, c)
	}
}

// comparison checks comparison c of steps[i].when: ordered operators on
// numbers, literals of the type compared, no item on a distributed step.
func (v *validator) comparison(i int, c Condition) {
	s := &v.p.Steps[i]
	t := v.p.CompareType(c)
	if IsOrdered(c.Op) && t != components.TypeInt && t != components.TypeFloat {
		v.atValue(v.sp(i, "when"), "%s compares int or float values: expected a reference to an int or float param or output on one side, not %s", c.Op, t)
	}
	for _, side := range []Binding{c.Left, c.Right} {
		if side.Item && s.Distributed != nil {
			v.atValue(v.sp(i, "when"), "a distributed step's when cannot compare its item (its launcher starts the gang of each iteration): compare it in a step before, or loop a pipeline whose distributed step has no when")
		}
		if side.IsRef() || side.Item {
			continue
		}
		if err := components.CheckValue(t, side.Literal); err != nil {
			v.atValue(v.sp(i, "when"), "cannot compare with %q: %v", side.Literal, err)
		}
	}
}
