package pipeline

import (
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
)

// loops reports whether the named step is a loop step.
func (v *validator) loops(step string) bool {
	s := v.p.Step(step)
	return s != nil && s.Loop != nil
}

// loop checks steps[i].loop and returns its items when the file gives them
// (a literal list, or the default of the parameter looped over), else nil.
func (v *validator) loop(i int, index map[string]int) []string {
	s := &v.p.Steps[i]
	if s.Loop == nil {
		return nil
	}
	if s.Finally {
		v.at(v.sp(i, "loop"), "a finally step cannot loop")
		return nil
	}
	if s.Loop.Parallelism < 0 || s.Loop.Parallelism > MaxParallelism {
		v.atValue(v.sp(i, "loop", "parallelism"), "expected 0 (no bound) to %d, got %d", MaxParallelism, s.Loop.Parallelism)
	}
	if s.Loop.Product.Kind != 0 {
		return v.product(i, index)
	}
	path := v.sp(i, "loop", "items")
	b, err := s.ItemsBinding()
	if err != nil {
		if s.Loop.Items.Kind == 0 {
			v.at(v.sp(i, "loop"), "%v", err)
		} else {
			v.atValue(path, "%v", err)
		}
		return nil
	}
	var list string
	switch {
	case b.Param != "":
		v.checkRefs(path, []ref{{param: b.Param}}, index, i)
		prm, ok := v.p.Params[b.Param]
		if !ok {
			return nil
		}
		if prm.Type != components.TypeJSON {
			v.atValue(path, "cannot loop over parameter %q: it is %s, expected json (a JSON list)", b.Param, prm.Type)
			return nil
		}
		if prm.Default.Kind == 0 {
			return nil
		}
		if list, err = components.NodeValue(prm.Type, &prm.Default); err != nil {
			return nil // reported with the parameter
		}
		if _, err := Items(list); err != nil {
			v.atValue(path, "cannot loop over parameter %q: its default: %v", b.Param, err)
			return nil
		}
	case b.Step != "":
		v.loopOutput(path, b, index, i)
		return nil
	default:
		list = b.Literal
	}
	items, err := Items(list)
	if err != nil {
		v.atValue(path, "%v", err)
		return nil
	}
	return items
}

// loopOutput checks a list a loop of steps[i] takes from a step's output
// (b, at path): a json output of a step that does not loop.
func (v *validator) loopOutput(path []any, b Binding, index map[string]int, i int) {
	v.checkRefs(path, []ref{{step: b.Step, output: b.Output}}, index, i)
	if v.loops(b.Step) {
		v.atValue(path, "cannot loop over output %q of loop step %q (a list of its iterations' outputs): loop over a json output of a step that does not loop", b.Output, b.Step)
	} else if out, ok := v.output(b.Step, b.Output); ok && out.Type != components.TypeJSON {
		v.atValue(path, "cannot loop over output %q of step %q: it is %s, expected json (a JSON list)", b.Output, b.Step, kfpv1.TypeName(out))
	}
}

// product checks steps[i].loop.product and returns its items when the
// file gives every list (written, or the default of the param), else nil.
func (v *validator) product(i int, index map[string]int) []string {
	s := &v.p.Steps[i]
	if s.Loop.Items.Kind != 0 {
		v.at(v.sp(i, "loop"), "loop has both items and product: expected one of them")
		return nil
	}
	lists, err := s.ProductLists()
	if err != nil {
		if pe, ok := err.(*ProductError); ok {
			v.atValue(v.sp(i, "loop", "product", pe.List), "%v", pe.Err)
		} else {
			v.atValue(v.sp(i, "loop", "product"), "%v", err)
		}
		return nil
	}
	given := make([][]string, len(lists))
	known := true
	for k, l := range lists {
		path := v.sp(i, "loop", "product", l.Name)
		list := l.Literal
		switch {
		case l.Item:
			continue
		case l.Step != "":
			v.loopOutput(path, l.Binding, index, i)
			known = false
			continue
		case l.Param != "":
			v.checkRefs(path, []ref{{param: l.Param}}, index, i)
			prm, ok := v.p.Params[l.Param]
			switch {
			case !ok:
				known = false
				continue
			case prm.Type != components.TypeJSON:
				v.atValue(path, "cannot loop over parameter %q: it is %s, expected json (a JSON list)", l.Param, prm.Type)
				known = false
				continue
			case prm.Default.Kind == 0:
				known = false
				continue
			}
			if list, err = components.NodeValue(prm.Type, &prm.Default); err != nil {
				known = false
				continue
			}
		}
		if given[k], err = Items(list); err != nil {
			v.atValue(path, "%v", err)
			known = false
		}
	}
	if !known {
		return nil
	}
	items, err := ProductItems(lists, given)
	if pe, ok := err.(*ProductError); ok {
		v.atValue(v.sp(i, "loop", "product", pe.List), "%v", pe.Err)
		return nil
	} else if err != nil {
		v.atValue(v.sp(i, "loop", "product"), "%v", err)
		return nil
	}
	return items
}

// checkItems reports {{item.FIELD}} references that an item the file
// gives lacks.
func (v *validator) checkItems(path []any, refs []ref, items []string) {
	for _, r := range refs {
		if !r.item || r.field == "" {
			continue
		}
		for k, it := range items {
			if _, err := ItemValue(it, r.field); err != nil {
				v.atValue(path, "unknown item field: item %d of the loop has no field %q (item %d: %s)", k, r.field, k, quoteShort(it))
				break
			}
		}
	}
}
