package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// expand replaces each step whose component is a pipeline by that
// pipeline's steps (already expanded), named STEP.INNER: their references
// to the pipeline's params become the values the step gives its inputs
// (or the params' defaults), their references to each other and the
// references of other steps to the step's outputs name the expanded steps,
// and each waits for what the step waits for. Loops, caching and records
// then work on the expanded steps as on any other.
func (v *validator) expand() {
	pl := v.p
	if len(v.subs) == 0 || v.tooManyNested() {
		return
	}
	outer := &rewriter{subs: map[string]*Pipeline{}}
	for i, sub := range v.subs {
		outer.subs[pl.Steps[i].Name] = sub
	}
	steps, nMain := v.expandSteps(outer)
	v.expandMetadata(outer, steps)
	if len(v.errs) > 0 {
		return
	}
	v.nestedLoopReads(steps)
	if len(v.errs) > 0 {
		return
	}
	pl.Steps, v.nMain = steps, nMain
	pl.byName = make(map[string]int, len(steps))
	for i, s := range steps {
		pl.byName[s.Name] = i
	}
	pl.linkMetadata()
	v.expandOutputs(outer)
}

// tooManyNested reports (at the step's component) whether the steps the
// nested pipelines add come to more than MaxNestedSteps.
func (v *validator) tooManyNested() bool {
	nested := 0
	for i := range v.p.Steps {
		sub := v.subs[i]
		if sub == nil {
			continue
		}
		if nested += len(sub.Steps); nested > MaxNestedSteps {
			name := sub.Source
			if name == v.f.Path {
				name = "an inline pipeline"
			}
			v.atValue(v.sp(i, "component"), "nested pipelines expand to more than %d steps: %s uses %s (%d steps) and the steps before this one add %d (expected at most %d steps from nested pipelines; a pipeline that uses the next one twice doubles at every level)", MaxNestedSteps, v.chainNames(), name, len(sub.Steps), nested-len(sub.Steps), MaxNestedSteps)
			return true
		}
	}
	return false
}

// expandSteps returns the pipeline's steps, each rewritten by outer and
// each that uses a pipeline replaced by that pipeline's steps (see
// expand), and how many of them come before the finally steps.
func (v *validator) expandSteps(outer *rewriter) ([]Step, int) {
	pl := v.p
	var steps []Step
	nMain := 0
	for i := range pl.Steps {
		s := pl.Steps[i]
		s.After = outer.after(s.After)
		if v.subs[i] == nil {
			if err := outer.step(&s); err != nil {
				v.at(v.sp(i), "%v", err)
				continue
			}
			steps = append(steps, s)
			if i < v.nMain {
				nMain++
			}
			continue
		}
		inner := v.nestedSteps(i, &s, outer)
		steps = append(steps, inner...)
		if !s.Finally {
			nMain += len(inner)
		}
	}
	return steps, nMain
}

// expansion is steps[i], whose component is pipeline sub, being replaced
// by the steps of sub.
type expansion struct {
	i int
	// s is the step, its after list rewritten already.
	s   *Step
	sub *Pipeline
	// inner rewrites the references of sub's steps (innerRewriter).
	inner *rewriter
	// loop and when are the step's loop (nil when it does not loop) and
	// condition, in the outer pipeline's terms.
	loop *Loop
	when string
}

// nestedSteps returns the steps of the pipeline steps[i] (s, its after
// list rewritten by outer) uses as its component, as steps of this
// pipeline: those that could be rewritten.
func (v *validator) nestedSteps(i int, s *Step, outer *rewriter) []Step {
	e := &expansion{i: i, s: s, sub: v.subs[i]}
	e.inner = v.innerRewriter(i, s, e.sub, outer)
	if s.Loop != nil {
		l, err := outer.loop(*s.Loop)
		if err != nil {
			v.at(v.sp(i, "loop"), "%v", err)
			return nil
		}
		e.loop = &l
	}
	if s.When != "" {
		var err error
		if e.when, err = outer.when(s.When); err != nil {
			v.atValue(v.sp(i, "when"), "%v", err)
			return nil
		}
	}
	var steps []Step
	for _, t := range e.sub.Steps {
		if t, ok := v.innerStep(e, t); ok {
			steps = append(steps, t)
		}
	}
	return steps
}

// innerRewriter is the rewriter of the steps of sub, the pipeline that
// steps[i] (s) uses: the value of each of its params is the one s gives
// its input of that name, rewritten by outer, else the param's default.
func (v *validator) innerRewriter(i int, s *Step, sub *Pipeline, outer *rewriter) *rewriter {
	inner := &rewriter{prefix: s.Name + NestedSep, params: map[string]*yaml.Node{}, types: map[string]string{}, paramAlts: map[string][]Binding{}}
	for _, name := range sub.ParamOrder {
		inner.types[name] = sub.Params[name].Type
		if n, ok := s.Inputs[name]; ok {
			alts, err := outer.nodeAlts(&n)
			if err != nil {
				v.atValue(v.sp(i, "inputs", name), "%v", err)
				continue
			}
			if alts != nil {
				inner.paramAlts[name] = alts
			}
			n, err := outer.node(&n)
			if err != nil {
				v.atValue(v.sp(i, "inputs", name), "%v", err)
				continue
			}
			inner.params[name] = n
		} else if d := sub.Params[name].Default; d.Kind != 0 {
			inner.params[name] = &d
		}
	}
	return inner
}

// innerStep returns step t of the pipeline e expands, rewritten as a step
// of this pipeline: named STEP.INNER, looping over the items of e's loop
// (with its own, a product: nestLoop), under e's condition too, after
// what e's step waits for; false when it cannot be.
func (v *validator) innerStep(e *expansion, t Step) (Step, bool) {
	i, s, sub, inner := e.i, e.s, e.sub, e.inner
	// A loop step of a looped pipeline: its own item is
	// {{item.inner}}, the pipeline's {{item.outer}} (nestLoop).
	r, nest := inner, e.loop != nil && t.Loop != nil
	if nest {
		if err := ownItems(&t); err != nil {
			v.at(v.sp(i, "component"), "%v", err)
			return t, false
		}
		r = inner.outerItems()
	}
	if err := r.step(&t); err != nil {
		if pe := (*paramError)(nil); errors.As(err, &pe) {
			v.atValue(v.sp(i, "inputs", pe.param), "input %q %s (%s, step %s)", pe.param, pe.msg, sub.Source, strings.TrimPrefix(t.Name, inner.prefix))
		} else {
			v.at(v.sp(i, "component"), "%v", err)
		}
		return t, false
	}
	if !v.innerName(e, t.Name) {
		return t, false
	}
	var own *Loop
	if e.loop != nil {
		if err := sameIteration(&t, inner.prefix); err != nil {
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s: %v", s.Name, sub.Source, err)
			return t, false
		}
		own = t.Loop // its own, rewritten
		t.Loop, t.Body = e.loop, s.Name
	}
	outerWhen := e.when
	if nest {
		l, err := nestLoop(*e.loop, *own, inner.prefix)
		if err != nil {
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, and its step %s loops of its own: %v", s.Name, sub.Source, strings.TrimPrefix(t.Name, inner.prefix), err)
			return t, false
		}
		t.Loop, t.Nested = &l, true
		if outerWhen, err = mapItems(e.when, NestOuter); err != nil {
			v.at(v.sp(i, "when"), "%v", err)
			return t, false
		}
	}
	t.After = append(t.After, s.After...)
	switch {
	case outerWhen != "" && t.When != "":
		// Both hold: the step's own, rewritten, and the outer one.
		t.When = outerWhen + " && " + t.When
	case outerWhen != "":
		t.When = outerWhen // already in the outer pipeline's terms
	}
	if !s.CacheEnabled() {
		t.Cache = s.Cache // cache: false on the step holds for each inner step
	}
	if s.Finally {
		// A finally step's pipeline: its steps are finally steps.
		t.Finally = true
	}
	return t, true
}

// innerName reports (at the name of e's step) whether name, that of a
// step of the pipeline e expands, rewritten, cannot be a step's name: too
// long, or the run record's key in the store.
func (v *validator) innerName(e *expansion, name string) bool {
	i, s, sub, prefix := e.i, e.s, e.sub, e.inner.prefix
	if len(name) > MaxStepNameLen {
		v.atValue(v.sp(i, "name"), "step %s of %s would be named %s (%d bytes): expected at most %d bytes, as the name becomes a directory of the store and an Argo task's name (shorten step %s or the steps of %s)", strings.TrimPrefix(name, prefix), sub.Source, name, len(name), MaxStepNameLen, s.Name, sub.Source)
		return false
	}
	if name == "run.json" || strings.HasPrefix(name, "run.json"+NestedSep) {
		v.atValue(v.sp(i, "name"), "step %s of %s would be named %s, the key of the run record in the store (rename step %s or %s)", strings.TrimPrefix(name, prefix), sub.Source, name, s.Name, strings.TrimPrefix(name, prefix))
		return false
	}
	return true
}

// nestedLoopReads refuses, among the expanded steps, a loop step of a
// looped pipeline that reads the outputs of another loop step of the same
// looped pipeline: their iterations are not the same.
func (v *validator) nestedLoopReads(steps []Step) {
	// The nested loop steps, by name: their looped pipeline's loop step.
	nestedIn := map[string]string{}
	for _, t := range steps {
		if t.Nested {
			nestedIn[t.Name] = t.Body
		}
	}
	for _, t := range steps {
		if !t.Nested || len(nestedIn) == 0 {
			continue // a step of the pipeline collects them per outer iteration
		}
		reads := t
		reads.After = nil
		for _, d := range reads.Deps() {
			if body, ok := nestedIn[d]; ok && body == t.Body {
				i := v.p.byName[t.Body]
				v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, whose step %s loops of its own and reads the outputs of step %s, which loops of its own too: not supported yet (their iterations are not the same)", t.Body, v.subs[i].Source, t.Name, d)
			}
		}
	}
}

// expandOutputs rewrites the pipeline's declared outputs (and their oneOf
// candidates) as outputs of the expanded steps.
func (v *validator) expandOutputs(outer *rewriter) {
	pl := v.p
	for name, b := range pl.outputs {
		alts := outer.outputAlts(b, pl.oneOf[name])
		pl.outputs[name] = outer.output(b)
		delete(pl.oneOf, name)
		if alts != nil {
			pl.outputs[name], pl.oneOf[name] = alts[0], alts
		}
	}
}

// nestLoop is the loop of a loop step of a looped pipeline whose loop is
// outer, its steps named prefix+NAME: the product of outer's items (list
// NestOuter) and its own (list NestInner), the first outermost, with its
// own parallelism, else outer's. Each list is written in the file, a json
// param or a json output of a step outside the pipeline; its own may also
// be the outer item or a field of it ({{item.outer.F}}: a list that
// differs from item to item). One given by another step of the pipeline
// (a list of each iteration) is not supported yet.
func nestLoop(outer, own Loop, prefix string) (Loop, error) {
	list := func(what string, n *yaml.Node, item bool) (*yaml.Node, error) {
		n = yamlfile.Deref(n)
		switch {
		case n.Kind == yaml.SequenceNode:
			return n, nil
		case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
			b, refs, err := parseBinding(n.Value)
			switch {
			case err != nil:
				return nil, err
			case b.Param != "":
				return n, nil
			case b.Step != "" && strings.HasPrefix(b.Step, prefix):
				return nil, fmt.Errorf("%s are given by output %q of step %s of the same looped pipeline: a loop inside a looped pipeline over a list each iteration gives is not supported yet", what, b.Output, strings.TrimPrefix(b.Step, prefix))
			case b.Step != "":
				return n, nil
			}
			if it, ok := wholeItem(n.Value); ok && item && (it.field == NestOuter || strings.HasPrefix(it.field, NestOuter+".")) {
				return n, nil // the outer item, or a field of it
			}
			if len(refs) > 0 {
				return nil, fmt.Errorf("%s are %q: expected a list written in the file, a json param, a step's json output or the looped pipeline's item or a field of it", what, n.Value)
			}
		}
		return nil, fmt.Errorf("%s: expected a list written in the file or a json param, got %s", what, describeNode(n))
	}
	switch {
	case outer.Product.Kind != 0:
		return Loop{}, fmt.Errorf("the looped pipeline's loop is a product: a loop inside it is not supported yet")
	case own.Product.Kind != 0:
		return Loop{}, fmt.Errorf("a loop.product inside a looped pipeline is not supported yet")
	}
	o, err := list("the looped pipeline's items", &outer.Items, false)
	if err != nil {
		return Loop{}, err
	}
	in, err := list("its items", &own.Items, true)
	if err != nil {
		return Loop{}, err
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	l := Loop{Product: yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str(NestOuter), o, str(NestInner), in}}, Parallelism: own.Parallelism}
	if l.Parallelism == 0 {
		l.Parallelism = outer.Parallelism
	}
	return l, nil
}

// mapItems rewrites the item references of text s as fields of list name
// of a product: {{item}} is {{item.NAME}}, {{item.F}} {{item.NAME.F}}.
func mapItems(s, name string) (string, error) {
	texts, refs, err := parseRefs(s)
	if err != nil || len(refs) == 0 {
		return s, err
	}
	var b strings.Builder
	for k, r := range refs {
		b.WriteString(texts[k])
		if r.item {
			r.field = strings.TrimSuffix(name+"."+r.field, ".")
		}
		b.WriteString(r.String())
	}
	b.WriteString(texts[len(texts)-1])
	return b.String(), nil
}

// ownItems rewrites the item references of loop step t of a looped
// pipeline, in its inputs, env and when, as its own list's of the product
// (NestInner).
func ownItems(t *Step) error {
	inputs := make(map[string]yaml.Node, len(t.Inputs))
	for name, n := range t.Inputs {
		if d := yamlfile.Deref(&n); d.Kind == yaml.ScalarNode && d.Tag == "!!str" {
			out := *d
			var err error
			if out.Value, err = mapItems(d.Value, NestInner); err != nil {
				return fmt.Errorf("step %s: input %q: %w", t.Name, name, err)
			}
			n = out
		}
		inputs[name] = n
	}
	t.Inputs = inputs
	env := slices.Clone(t.Env)
	for k := range env {
		var err error
		if env[k].Value, err = mapItems(env[k].Value, NestInner); err != nil {
			return fmt.Errorf("step %s: env %s: %w", t.Name, env[k].Name, err)
		}
	}
	t.Env = env
	var err error
	if t.When, err = mapItems(t.When, NestInner); err != nil {
		return fmt.Errorf("step %s: when: %w", t.Name, err)
	}
	return nil
}

// outerItems is r for a loop step of the looped pipeline: the params
// given the pipeline's item give it as the product's list NestOuter.
func (r *rewriter) outerItems() *rewriter {
	out := *r
	out.params = make(map[string]*yaml.Node, len(r.params))
	for name, n := range r.params {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			if text, err := mapItems(n.Value, NestOuter); err == nil && text != n.Value {
				c := *n
				c.Value = text
				n = &c
			}
		}
		out.params[name] = n
	}
	return &out
}

// sameIteration refuses what step t of a looped pipeline (its steps
// named prefix+NAME) cannot do with the outputs of the pipeline's other
// steps, which it reads iteration by iteration: name its Secret or give
// its resources by them (a step's Secret and pod are the same for all its
// iterations).
func sameIteration(t *Step, prefix string) error {
	inner := func(b Binding) bool { return strings.HasPrefix(b.Step, prefix) }
	if t.Resources != nil {
		refs := t.Resources.Refs()
		for _, f := range slices.Sorted(maps.Keys(refs)) {
			if b := refs[f]; inner(b) {
				return fmt.Errorf("step %s: resources.%s: a resource given by output %q of step %s of the same looped pipeline is not supported (a step's pod template is the same for all its iterations)", strings.TrimPrefix(t.Name, prefix), f, b.Output, strings.TrimPrefix(b.Step, prefix))
			}
		}
	}
	for _, sec := range t.Secrets {
		if b := sec.Ref(); inner(b) {
			return fmt.Errorf("step %s: secret %s: a Secret named by output %q of step %s of the same looped pipeline is not supported (a step's Secret is the same for all its iterations)", strings.TrimPrefix(t.Name, prefix), sec.Env, b.Output, strings.TrimPrefix(b.Step, prefix))
		}
	}
	return nil
}
