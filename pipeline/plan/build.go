package plan

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// Build returns the plan of the named step of a loaded pipeline. It is
// pure: it reads nothing but its arguments and changes neither.
func Build(p *pipeline.Pipeline, name string) (*Step, error) {
	s := p.Step(name)
	if s == nil {
		return nil, fmt.Errorf("pipeline %s has no step %q", p.Metadata.Name, name)
	}
	if s.Resolved == nil {
		return nil, errors.New("component not loaded")
	}
	comp, err := s.Resolved.Program()
	if err != nil {
		return nil, err
	}
	w, err := wiring(p, s)
	if err != nil {
		return nil, err
	}
	st := &Step{
		Pipeline: p.Metadata.Name, Name: s.Name, Component: comp, Wiring: w,
		Deps: s.Deps(), Retries: s.Retries, Timeout: s.Timeout,
		Cache: s.CacheEnabled(), Image: cmp.Or(s.Image, s.Resolved.Image), Finally: s.Finally,
		AfterCompleted: s.AfterCompleted(),
	}
	if s.Loop != nil {
		st.Loop = &Loop{Parallelism: s.Loop.Parallelism}
	}
	if s.When != "" {
		cond, err := condition(p, s, s.When)
		if err != nil {
			return nil, fmt.Errorf("when: %w", err)
		}
		if cond.PerIteration() {
			if s.Distributed != nil {
				return nil, fmt.Errorf("when: %q compares the item or another step's output of the same iteration: not supported on a distributed step (its launcher starts the gang of each iteration)", s.When)
			}
			w.When = cond
		} else {
			st.When = cond
		}
	}
	if st.AfterCompleted {
		if err := completedReads(st, s); err != nil {
			return nil, err
		}
	}
	if s.Distributed != nil {
		if st.Distributed, err = distributed(s); err != nil {
			return nil, fmt.Errorf("distributed: %w", err)
		}
	} else if st.Pod, err = podOf(s.Resources, s.NodeSelector, s.Tolerations); err != nil {
		return nil, err
	}
	if len(s.Secrets) > 0 {
		pod := &st.Pod
		if st.Distributed != nil {
			pod = &st.Distributed.Pod
		}
		pod.Secrets = slices.Clone(s.Secrets)
	}
	if m := s.PodMetadata; m != nil && st.Distributed == nil {
		st.Pod.Labels, st.Pod.Annotations = maps.Clone(m.Labels), maps.Clone(m.Annotations)
	}
	return st, nil
}

// wiring builds what each input of the step gets.
func wiring(p *pipeline.Pipeline, s *pipeline.Step) (*Wiring, error) {
	comp := s.Resolved
	w := &Wiring{Version: wire.WiringVersion, Step: s.Name, Params: map[string]Text{}, Inputs: map[string]OutputRef{}, Upstream: map[string]OutputRef{}}
	if s.Nested {
		w.SameList = pipeline.NestOuter
	}
	binds := s.Bindings()
	for _, name := range slices.Sorted(maps.Keys(binds)) {
		b := binds[name]
		in, ok := comp.Input(name)
		if !ok {
			return nil, fmt.Errorf("component %s has no input %q", comp.Metadata.Name, name)
		}
		var err error
		switch alts := s.OneOf(name); {
		case alts != nil && s.AfterCompleted():
			err = fmt.Errorf("input %q: the output of the first of several steps that ran (%s) is not supported on a step with trigger: completed", name, bindingSteps(alts))
		case alts != nil:
			err = oneOf(p, s, w, name, in, alts)
		case b.Step != "":
			err = stepInput(p, s, w, name, in, b)
		case b.Param != "" && components.IsArtifact(p.Params[b.Param].Type):
			err = paramArtifactInput(p, s, w, comp, name, b)
		case b.Param != "":
			w.Params[name] = Text{{Param: b.Param}}
		default:
			err = literalInput(p, s, w, comp, name, b)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := items(p, s, comp, w); err != nil {
		return nil, err
	}
	for _, e := range s.Env {
		t, err := literal(e.Value, nil)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", e.Name, err)
		}
		w.Env = append(w.Env, EnvText{Name: e.Name, Value: t})
	}
	if s.Distributed == nil {
		res, err := runtimeResources(p, s.Resources, w)
		if err != nil {
			return nil, err
		}
		w.Resources = res
	}
	for _, r := range w.ParamNames() {
		if _, ok := p.Params[r]; !ok {
			return nil, fmt.Errorf("unknown parameter %q", r)
		}
	}
	return w, nil
}

// stepInput wires input name, given output b of an upstream step.
func stepInput(p *pipeline.Pipeline, s *pipeline.Step, w *Wiring, name string, in components.IO, b pipeline.Binding) error {
	out, err := upstreamOutput(p, b.Step, b.Output)
	if err != nil {
		return fmt.Errorf("input %q: %w", name, err)
	}
	ref := OutputRef{Step: b.Step, Output: b.Output}
	if s.AfterCompleted() {
		return orDefault(p, w, name, in, ref, out)
	}
	if up := p.Step(b.Step); s.SameIteration(up) {
		if w.Same == nil {
			w.Same = map[string]OutputRef{}
		}
		w.Same[name] = ref
		if !components.IsArtifact(out.Type) {
			w.Params[name] = Text{{Upstream: name}}
		}
		return nil
	} else if up.Loop != nil {
		if w.Collected == nil {
			w.Collected = map[string]OutputRef{}
		}
		w.Collected[name] = ref
		if s.OuterIteration(up) {
			if err := collectedOuter(p, up, w, name); err != nil {
				return fmt.Errorf("input %q: %w", name, err)
			}
		}
		return nil
	}
	// Each output travels as what it is (KFP lets a value feed an
	// artifact input and an artifact an input parameter).
	if components.IsArtifact(out.Type) {
		w.Inputs[name] = ref
	} else {
		w.Params[name] = Text{{Upstream: name}}
		w.Upstream[name] = ref
	}
	return nil
}

// paramArtifactInput wires input name, given a root pipeline's artifact
// param b.Param: the URI of an artifact of the store, given at run time.
func paramArtifactInput(p *pipeline.Pipeline, s *pipeline.Step, w *Wiring, comp *components.Component, name string, b pipeline.Binding) error {
	if w.ParamInputs == nil {
		w.ParamInputs = map[string]string{}
	}
	w.ParamInputs[name] = b.Param
	meta, err := p.Params[b.Param].MetadataJSON()
	if err != nil {
		return fmt.Errorf("input %q: parameter %q: metadata: %v", name, b.Param, err)
	}
	if meta != "" {
		if w.Metadata == nil {
			w.Metadata = map[string]json.RawMessage{}
		}
		w.Metadata[name] = json.RawMessage(meta)
		if err := metadataUpstream(p, s, w, name, comp); err != nil {
			return fmt.Errorf("input %q: parameter %q: metadata: %v", name, b.Param, err)
		}
	}
	return nil
}

// literalInput wires input name, given a text b.Literal, which may hold
// step outputs.
func literalInput(p *pipeline.Pipeline, s *pipeline.Step, w *Wiring, comp *components.Component, name string, b pipeline.Binding) error {
	k := 0
	t, err := literal(b.Literal, func(r pipeline.LiteralRef) (string, error) {
		// A step output inside the text: an upstream value of
		// its own, named after the input and its place.
		out, err := upstreamOutput(p, r.Step, r.Output)
		if err != nil {
			return "", err
		}
		if s.AfterCompleted() {
			return "", fmt.Errorf("output %q of step %s inside a text: a step with trigger: completed takes an output whole, into an input with a default", r.Output, r.Step)
		}
		up := p.Step(r.Step)
		same := s.SameIteration(up)
		if components.IsArtifact(out.Type) || up.Loop != nil && !same {
			return "", fmt.Errorf("output %q of step %s can only be given whole", r.Output, r.Step)
		}
		k++
		key := fmt.Sprintf("%s--%d", name, k)
		if _, clash := comp.Input(key); clash || key == ItemsInput {
			return "", fmt.Errorf("the value of step %s's output %q inside the text would travel as %q, the name of an input", r.Step, r.Output, key)
		}
		if same {
			if w.Same == nil {
				w.Same = map[string]OutputRef{}
			}
			w.Same[key] = OutputRef{Step: r.Step, Output: r.Output}
			return key, nil
		}
		w.Upstream[key] = OutputRef{Step: r.Step, Output: r.Output}
		return key, nil
	})
	if err != nil {
		return fmt.Errorf("input %q: %v", name, err)
	}
	w.Params[name] = t
	return nil
}

// items wires a loop step's items: a product of lists, an upstream output,
// a param or a literal list.
func items(p *pipeline.Pipeline, s *pipeline.Step, comp *components.Component, w *Wiring) error {
	if lists, err := productLists(p, s, comp, w); err != nil {
		return err
	} else if lists != nil {
		w.Items = Text{{Product: lists}}
	} else if s.Loop != nil {
		b, err := s.ItemsBinding()
		if err != nil {
			return fmt.Errorf("loop: %v", err)
		}
		switch {
		case b.Step != "":
			if _, err := upstreamOutput(p, b.Step, b.Output); err != nil {
				return fmt.Errorf("loop: %w", err)
			}
			if s.AfterCompleted() {
				return fmt.Errorf("loop: the items are output %q of step %s: not supported on a step with trigger: completed", b.Output, b.Step)
			}
			if p.Step(b.Step).Loop != nil {
				return fmt.Errorf("loop: step %s is itself a loop: loop over a json output of a step that does not loop", b.Step)
			}
			w.Items = Text{{Upstream: ItemsInput}}
			w.Upstream[ItemsInput] = OutputRef{Step: b.Step, Output: b.Output}
		case b.Param != "":
			w.Items = Text{{Param: b.Param}}
		default:
			w.Items = Text{{Lit: b.Literal}}
		}
	}
	return nil
}

// productLists are the lists of a loop step's product, nil when it has
// none: each a literal JSON list, a param, an upstream output (travelling
// as the input ProductInputPrefix+NAME) or the field of an earlier list's
// item.
func productLists(p *pipeline.Pipeline, s *pipeline.Step, comp *components.Component, w *Wiring) ([]ProductList, error) {
	if s.Loop == nil {
		return nil, nil
	}
	lists, err := s.ProductLists()
	if err != nil || lists == nil {
		if err != nil {
			err = fmt.Errorf("loop.product: %v", err)
		}
		return nil, err
	}
	out := make([]ProductList, len(lists))
	for i, l := range lists {
		out[i] = ProductList{Name: l.Name, List: Text{{Lit: l.Literal}}}
		switch {
		case l.Param != "":
			out[i].List = Text{{Param: l.Param}}
		case l.Item:
			out[i].List = Text{{Item: &ItemRef{Field: l.Field}}}
		case l.Step != "":
			if _, err := upstreamOutput(p, l.Step, l.Output); err != nil {
				return nil, fmt.Errorf("loop.product: list %s: %w", l.Name, err)
			}
			if p.Step(l.Step).Loop != nil {
				return nil, fmt.Errorf("loop.product: list %s: step %s is itself a loop: loop over a json output of a step that does not loop", l.Name, l.Step)
			}
			key := ProductInputPrefix + l.Name
			if _, clash := comp.Input(key); clash {
				return nil, fmt.Errorf("loop.product: list %s: its step output would travel as %q, the name of an input", l.Name, key)
			}
			out[i].List = Text{{Upstream: key}}
			w.Upstream[key] = OutputRef{Step: l.Step, Output: l.Output}
		}
	}
	return out, nil
}

// collectedOuter makes input name, given the collected outputs of nested
// loop step up, collect those of the current outer iteration only
// (Wiring.CollectedOuter): up's product lists, written or params (whose
// values the step then takes too) or fields of the outer item.
func collectedOuter(p *pipeline.Pipeline, up *pipeline.Step, w *Wiring, name string) error {
	upw := &Wiring{Upstream: map[string]OutputRef{}}
	lists, err := productLists(p, up, up.Resolved, upw)
	if err != nil {
		return err
	}
	if len(upw.Upstream) > 0 {
		return fmt.Errorf("step %s loops over a step's output: its outputs collected per outer iteration are not supported yet", up.Name)
	}
	if w.CollectedOuter == nil {
		w.CollectedOuter = map[string][]ProductList{}
	}
	w.CollectedOuter[name] = lists
	return nil
}

// oneOf wires input in (name) of step s the output of the first of the
// steps alts that succeeded (Wiring.OneOf; steps of the same looped
// pipeline as s: that ran the same iteration, Wiring.SameOneOf): a
// parameter's value comes as an upstream value of its own, an artifact's
// URI as Values.Artifacts.
func oneOf(p *pipeline.Pipeline, s *pipeline.Step, w *Wiring, name string, in components.IO, alts []pipeline.Binding) error {
	var refs []OutputRef
	same := 0
	for _, a := range alts {
		out, err := upstreamOutput(p, a.Step, a.Output)
		if err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		if up := p.Step(a.Step); up.Loop != nil {
			if !s.SameIteration(up) || up.Nested {
				return fmt.Errorf("input %q: step %s loops: the output of the first of several steps that ran is one value", name, a.Step)
			}
			same++
		}
		if components.IsArtifact(out.Type) != components.IsArtifact(in.Type) {
			return fmt.Errorf("input %q (%s): output %q of step %s is %s: the output of the first of several steps that ran is given as it is", name, in.Type, a.Output, a.Step, out.Type)
		}
		refs = append(refs, OutputRef{Step: a.Step, Output: a.Output})
	}
	switch {
	case same == 0:
		if w.OneOf == nil {
			w.OneOf = map[string][]OutputRef{}
		}
		w.OneOf[name] = refs
	case same == len(refs):
		if w.SameOneOf == nil {
			w.SameOneOf = map[string][]OutputRef{}
		}
		w.SameOneOf[name] = refs
	default:
		return fmt.Errorf("input %q: steps %s: the output of the first of several steps that ran is either the same iteration's of steps of the same looped pipeline, or of steps that do not loop", name, refSteps(refs))
	}
	if !components.IsArtifact(in.Type) {
		w.Params[name] = Text{{Upstream: name}}
	}
	return nil
}

// orDefault wires input in (name) of a step with trigger: completed the
// output ref (out) of a step it depends on, or its default when that step
// did not succeed (Wiring.OrDefault): a parameter's value comes as an
// upstream value of its own, an artifact's URI as Values.Artifacts.
func orDefault(p *pipeline.Pipeline, w *Wiring, name string, in components.IO, ref OutputRef, out components.IO) error {
	switch up := p.Step(ref.Step); {
	case up.Loop != nil:
		return fmt.Errorf("input %q: step %s loops: its collected outputs are not supported on a step with trigger: completed", name, ref.Step)
	case in.Required():
		return fmt.Errorf("input %q is given output %q of step %s, which is not there when that step did not succeed: a step with trigger: completed then gives the input its default, and it has none", name, ref.Output, ref.Step)
	}
	if w.OrDefault == nil {
		w.OrDefault = map[string]OutputRef{}
	}
	w.OrDefault[name] = ref
	if !components.IsArtifact(out.Type) {
		w.Params[name] = Text{{Upstream: name}}
	}
	return nil
}

// completedReads refuses what step st (s), with trigger: completed,
// reads of other steps beyond Wiring.OrDefault: an output read anywhere
// else may not be there. (The loader refuses each at its line; a nested
// pipeline's param given a step output reaches here.)
func completedReads(st *Step, s *pipeline.Step) error {
	const why = "a step with trigger: completed runs even when the steps it depends on did not succeed, and reads their outputs only whole, each into an input with a default"
	if ins := st.Wiring.UpstreamInputs(); len(ins) > 0 {
		ref := st.Wiring.Upstream[ins[0]]
		by := "input " + strings.Split(ins[0], "--")[0] // a step output inside a text travels as INPUT--N
		switch f, ok := strings.CutPrefix(ins[0], ResourceInputPrefix); {
		case ins[0] == ItemsInput:
			by = "the loop's items"
		case ok:
			by = "resources." + f
		}
		return fmt.Errorf("output %q of step %s, read by %s: %s", ref.Output, ref.Step, by, why)
	}
	if st.When != nil {
		for _, c := range append([]Condition{*st.When}, st.When.And...) {
			for _, o := range []Operand{c.Left, c.Right} {
				if o.Output != nil {
					return fmt.Errorf("when: output %q of step %s: %s", o.Output.Output, o.Output.Step, why)
				}
			}
		}
	}
	for _, sec := range s.Secrets {
		if b := sec.Ref(); b.Step != "" {
			return fmt.Errorf("secret %s: output %q of step %s: %s", sec.Env, b.Output, b.Step, why)
		}
	}
	return nil
}

// bindingSteps are the steps of bs, joined by commas.
func bindingSteps(bs []pipeline.Binding) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Step
	}
	return strings.Join(names, ", ")
}

// upstreamOutput returns the declared output of a step.
func upstreamOutput(p *pipeline.Pipeline, step, output string) (components.IO, error) {
	up := p.Step(step)
	if up == nil || up.Resolved == nil {
		return components.IO{}, fmt.Errorf("unknown step %q", step)
	}
	out, ok := up.Resolved.Output(output)
	if !ok {
		return components.IO{}, fmt.Errorf("step %s has no output %q", step, output)
	}
	return out, nil
}

// literal splits a literal holding {{params.NAME}}, {{item...}},
// {{run.FIELD}} and, when upstream is not nil, {{steps.STEP.outputs.OUTPUT}}
// references into parts; upstream names the upstream value of a step output.
func literal(s string, upstream func(pipeline.LiteralRef) (string, error)) (Text, error) {
	texts, refs, err := pipeline.LiteralParts(s)
	if err != nil {
		return nil, err
	}
	var t Text
	for i, lit := range texts {
		if lit != "" {
			t = append(t, Part{Lit: lit})
		}
		if i < len(refs) {
			switch r := refs[i]; {
			case r.Item:
				t = append(t, Part{Item: &ItemRef{Field: r.Field}})
			case r.Run != "":
				t = append(t, Part{Run: r.Run})
			case r.Step != "" && upstream == nil:
				return nil, fmt.Errorf("{{steps.%s.outputs.%s}} cannot be used here", r.Step, r.Output)
			case r.Step != "":
				key, err := upstream(r)
				if err != nil {
					return nil, err
				}
				t = append(t, Part{Upstream: key})
			default:
				t = append(t, Part{Param: r.Param})
			}
		}
	}
	if len(t) == 0 {
		t = Text{{}}
	}
	return t, nil
}

// ParamNames are the pipeline parameters the wiring reads, sorted.
func (w *Wiring) ParamNames() []string {
	set := map[string]bool{}
	if w.When != nil {
		for _, c := range append([]Condition{*w.When}, w.When.And...) {
			for _, o := range []Operand{c.Left, c.Right} {
				if o.Param != "" {
					set[o.Param] = true
				}
			}
		}
	}
	var add func(t Text)
	add = func(t Text) {
		for _, p := range t {
			if p.Param != "" {
				set[p.Param] = true
			}
			for _, l := range p.Product {
				add(l.List)
			}
		}
	}
	for _, t := range w.Params {
		add(t)
	}
	add(w.Items)
	for _, lists := range w.CollectedOuter {
		for _, l := range lists {
			add(l.List)
		}
	}
	for _, e := range w.Env {
		add(e.Value)
	}
	for _, t := range w.Resources {
		add(t)
	}
	for _, prm := range w.ParamInputs {
		set[prm] = true
	}
	for _, meta := range w.Metadata {
		for _, prm := range metadataParams(meta) {
			set[prm] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// metadataUpstream adds to w.Upstream the step outputs the metadata of
// input name (w.Metadata) embeds, under their keys (metadataKey): output
// parameters of steps that are not loop steps.
func metadataUpstream(p *pipeline.Pipeline, s *pipeline.Step, w *Wiring, name string, comp *components.Component) error {
	for k, ref := range metadataOutputs(w.Metadata[name]) {
		out, err := upstreamOutput(p, ref.Step, ref.Output)
		if err != nil {
			return err
		}
		up := p.Step(ref.Step)
		switch {
		case components.IsArtifact(out.Type):
			return fmt.Errorf("output %q of step %s is an artifact: metadata embeds output parameters", ref.Output, ref.Step)
		case up.Loop != nil:
			return fmt.Errorf("output %q of loop step %s is collected: metadata embeds single values", ref.Output, ref.Step)
		case up.Name == s.Name:
			return fmt.Errorf("step %s cannot wait for its own output %q", s.Name, ref.Output)
		}
		key := metadataKey(name, k+1)
		if _, clash := comp.Input(key); clash || key == ItemsInput {
			return fmt.Errorf("the value of step %s's output %q in the metadata would travel as %q, the name of an input", ref.Step, ref.Output, key)
		}
		w.Upstream[key] = ref
	}
	return nil
}

// UpstreamInputs are the inputs fed by upstream output parameters, sorted.
func (w *Wiring) UpstreamInputs() []string { return slices.Sorted(maps.Keys(w.Upstream)) }

// condition parses step s's when into operands, checking each reference.
func condition(p *pipeline.Pipeline, s *pipeline.Step, when string) (*Condition, error) {
	conds, _, err := pipeline.ParseWhen(when)
	if err != nil {
		return nil, err
	}
	first, err := comparison(p, s, conds[0])
	if err != nil {
		return nil, err
	}
	first.Source = when
	for _, c := range conds[1:] {
		next, err := comparison(p, s, c)
		if err != nil {
			return nil, err
		}
		first.And = append(first.And, *next)
	}
	return first, nil
}

// comparison plans one comparison of step s's when.
func comparison(p *pipeline.Pipeline, s *pipeline.Step, c pipeline.Condition) (*Condition, error) {
	cond := &Condition{Op: c.Op, Type: p.CompareType(c)}
	for _, side := range []struct {
		b   pipeline.Binding
		dst *Operand
	}{{c.Left, &cond.Left}, {c.Right, &cond.Right}} {
		b := side.b
		switch {
		case b.Param != "":
			if _, ok := p.Params[b.Param]; !ok {
				return nil, fmt.Errorf("unknown parameter %q", b.Param)
			}
			*side.dst = Operand{Param: b.Param}
		case b.Step != "":
			out, err := upstreamOutput(p, b.Step, b.Output)
			if err != nil {
				return nil, err
			}
			if components.IsArtifact(out.Type) {
				return nil, fmt.Errorf("output %q of step %s is an artifact (%s): a condition can only use parameters", b.Output, b.Step, out.Type)
			}
			*side.dst = Operand{Output: &OutputRef{Step: b.Step, Output: b.Output}, Same: s.SameIteration(p.Step(b.Step))}
		case b.Item:
			if s.Loop == nil {
				return nil, fmt.Errorf("{{item}} outside a loop step")
			}
			*side.dst = Operand{Item: &ItemRef{Field: b.Field}}
		default:
			*side.dst = Operand{Lit: b.Literal}
		}
	}
	return cond, nil
}

// distributed plans the ranks of a distributed step.
func distributed(s *pipeline.Step) (*Distributed, error) {
	d := s.Distributed
	r := d.Resources
	if r == nil {
		r = s.Resources
	}
	nodeSelector := d.NodeSelector
	if nodeSelector == nil {
		nodeSelector = s.NodeSelector
	}
	tols := d.Tolerations
	if tols == nil {
		tols = s.Tolerations
	}
	pod, err := podOf(r, nodeSelector, tols)
	if err != nil {
		return nil, err
	}
	if pod.Affinity, err = affinityOf(&d.Affinity); err != nil {
		return nil, err
	}
	pod.PriorityClassName = d.PriorityClass
	shm, err := shmSize(d.ShmSize, pod.Resources)
	if err != nil {
		return nil, err
	}
	procs := d.ProcsPerNode
	if procs < 1 {
		procs = max(gpus(r), 1)
	}
	framework, err := rankenv.ParseFramework(d.Framework)
	if err != nil {
		return nil, err
	}
	if framework == rankenv.JAX {
		procs = 1 // one JAX process drives every device of its node
	}
	if framework == rankenv.Torch {
		framework = "" // the default, as before frameworks
	}
	pd := &Distributed{
		Nodes: d.Nodes, ProcsPerNode: procs, LocalProcsPerNode: d.Procs(), Framework: framework,
		MaxRestarts: d.MaxRestarts, StartupTimeout: d.StartupTimeout, StallTimeout: d.StallTimeout,
		Port: d.Port, ShmSize: shm, Pod: pod,
	}
	if c := d.Checkpoint; c != nil {
		pd.CheckpointKeep, pd.CheckpointEvery = c.Keep, c.Every
	}
	if g := d.Gang; g != nil {
		pd.Gang = &Gang{}
		if g.Kueue != nil {
			pd.Gang.KueueQueue = g.Kueue.Queue
		}
		if g.PodGroup != nil {
			pd.Gang.PodGroupScheduler = g.PodGroup.Scheduler
			pd.Gang.PodGroupTimeout = g.PodGroup.Timeout
		}
	}
	return pd, nil
}
