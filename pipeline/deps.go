package pipeline

import (
	"sort"
	"strings"
)

// checkRefs reports references to unknown params, steps and outputs, and
// references a step may not make: {{item}} outside a loop, {{run.FIELD}}
// outside a finally step, outputs across the finally boundary.
func (v *validator) checkRefs(path []any, refs []ref, index map[string]int, self int) {
	s := &v.p.Steps[self]
	for _, r := range refs {
		switch {
		case r.item:
			if s.Loop == nil {
				v.atValue(path, "{{item}} is defined only in a step with loop: (step %q has none)", s.Name)
			}
			continue
		case r.run != "":
			if !s.Finally && r.run != RunID && r.run != RunScheduledTime {
				v.atValue(path, "{{run.%s}} is defined only in a finally step", r.run)
			}
			continue
		case r.param != "":
			if _, ok := v.p.Params[r.param]; !ok {
				v.atValue(path, "unknown parameter %q (params: %s)", r.param, v.paramNames())
			}
			continue
		}
		j, ok := index[r.step]
		switch {
		case !ok:
			v.atValue(path, "unknown step %q (steps: %s)", r.step, v.stepNames())
			continue
		case j == self:
			v.atValue(path, "step %q cannot use its own output %q", r.step, r.output)
			continue
		}
		if !v.checkFinally(path, self, j) {
			continue
		}
		if c := v.p.Steps[j].Resolved; c != nil {
			if _, ok := c.Output(r.output); !ok {
				v.atValue(path, "step %q (component %s) has no output %q (outputs: %s)", r.step, c.Metadata.Name, r.output, ioNames(c.Outputs))
			}
		}
	}
}

// checkFinally reports a dependency of step self on step dep across the
// finally boundary: a finally step runs whatever the outcome of the other
// steps, so it depends on finally steps only, and no other step on it.
func (v *validator) checkFinally(path []any, self, dep int) bool {
	s, d := &v.p.Steps[self], &v.p.Steps[dep]
	switch {
	case s.Finally && !d.Finally && d.Loop != nil:
		v.atValue(path, "finally step %q cannot depend on the iterations of loop step %q: finally steps run after the other steps whatever their outcome (read {{run.status}} and {{run.failedSteps}} instead)", s.Name, d.Name)
	case s.Finally && !d.Finally:
		v.atValue(path, "finally step %q cannot depend on step %q: finally steps run after the other steps whatever their outcome (read {{run.status}} and {{run.failedSteps}} instead)", s.Name, d.Name)
	case !s.Finally && d.Finally:
		v.atValue(path, "step %q cannot depend on finally step %q: finally steps run after every other step", s.Name, d.Name)
	default:
		return true
	}
	return false
}

// cycles reports each dependency cycle once, naming its steps in order.
func (v *validator) cycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(name string) bool
	visit = func(name string) bool {
		color[name] = grey
		stack = append(stack, name)
		for _, d := range v.p.Deps(name) {
			switch color[d] {
			case grey:
				start := 0
				for k, s := range stack {
					if s == d {
						start = k
					}
				}
				cycle := append(append([]string{}, stack[start:]...), d)
				i := v.p.index(d)
				v.at(v.sp(i), "dependency cycle: %s (each step waits for the next)", strings.Join(cycle, " → "))
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[name] = black
		return false
	}
	for _, s := range v.p.Steps {
		if color[s.Name] == white {
			stack = stack[:0]
			if visit(s.Name) {
				return
			}
		}
	}
}

// index returns the position of the named step, or -1.
func (pl *Pipeline) index(name string) int {
	if i, ok := pl.byName[name]; ok && i < len(pl.Steps) && pl.Steps[i].Name == name {
		return i
	}
	for i, s := range pl.Steps {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Step returns the named step, or nil.
func (pl *Pipeline) Step(name string) *Step {
	if i := pl.index(name); i >= 0 {
		return &pl.Steps[i]
	}
	return nil
}

// StepNames lists the steps' names in order, comma-separated: what an
// error about a step the pipeline does not have offers instead.
func (pl *Pipeline) StepNames() string {
	names := make([]string, len(pl.Steps))
	for i, s := range pl.Steps {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// Deps returns the steps the named step depends on, sorted (see Step.Deps).
func (pl *Pipeline) Deps(name string) []string {
	if s := pl.Step(name); s != nil {
		return s.Deps()
	}
	return nil
}

// Deps returns the steps s depends on, sorted: those whose outputs it uses
// (in inputs, when, or the metadata of an artifact param it reads) and
// those it names in after. It does not look at the
// other steps, so walking a whole pipeline's DAG stays linear.
func (s *Step) Deps() []string {
	set := map[string]bool{}
	for _, a := range s.After {
		set[a] = true
	}
	for _, g := range s.OneOfGroups() {
		for _, name := range g {
			set[name] = true
		}
	}
	for _, b := range s.Bindings() {
		if b.Step != "" {
			set[b.Step] = true
		}
		// A step output inside a longer text.
		if _, refs, err := parseRefs(b.Literal); b.Literal != "" && err == nil {
			for _, r := range refs {
				if r.step != "" {
					set[r.step] = true
				}
			}
		}
	}
	if s.Loop != nil {
		if b, err := s.ItemsBinding(); err == nil && b.Step != "" {
			set[b.Step] = true
		}
		lists, _ := s.ProductLists()
		for _, l := range lists {
			if l.Step != "" {
				set[l.Step] = true
			}
		}
	}
	for _, sec := range s.Secrets {
		if b := sec.Ref(); b.Step != "" {
			set[b.Step] = true
		}
	}
	for _, b := range s.Resources.Refs() {
		if b.Step != "" {
			set[b.Step] = true
		}
	}
	for _, d := range s.metaDeps {
		set[d] = true
	}
	if s.When != "" {
		if conds, _, err := ParseWhen(s.When); err == nil {
			for _, c := range conds {
				for _, b := range []Binding{c.Left, c.Right} {
					if b.Step != "" {
						set[b.Step] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
