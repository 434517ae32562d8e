package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// chainLink is one pipeline file being loaded: its path as given and as an
// absolute path (which recursion is checked on).
type chainLink struct{ path, abs string }

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return filepath.Clean(a)
	}
	return filepath.Clean(path)
}

// isPipeline reports whether a file's root is a pipeline (kind: Pipeline).
func isPipeline(root *yaml.Node) bool {
	n, _, ok := yamlfile.Lookup(root, "kind")
	return ok && n.Kind == yaml.ScalarNode && n.Value == "Pipeline"
}

// isComponentFile reports whether a file's root is that of a pipeline or
// component file: apiVersion pipectl.dev/v1alpha1, or a KFP component (an
// implementation and no apiVersion).
func isComponentFile(root *yaml.Node) bool {
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	if n, _, ok := yamlfile.Lookup(root, "apiVersion"); ok {
		return n.Kind == yaml.ScalarNode && n.Value == components.APIVersion
	}
	_, _, ok := yamlfile.Lookup(root, "implementation")
	return ok
}

// NestedSep joins a step that uses a pipeline and a step of that pipeline
// into the name of the expanded step: OUTER.INNER (step names never hold it).
const NestedSep = "."

// MaxNestingDepth bounds how deep pipelines (and KFP graphs) use each
// other as step components: the outermost file counts as 1.
const MaxNestingDepth = 32

// MaxStepNameLen bounds the name of a nested pipeline's expanded step
// (OUTER.INNER, any depth): it becomes a directory of the store and of the
// work directory (STEP[i] for a loop's iteration, within a file name's 255
// bytes) and an Argo DAG task's name (at most 128 characters, with "step-"
// before a leading digit).
const MaxStepNameLen = 120

// MaxNestedSteps bounds the steps that nested pipelines add to one
// pipeline when they are expanded. Pipelines that each use the next one
// twice double at every level: without a bound 25 levels are 33 million
// steps and memory until the kernel kills the process. A pipeline's own
// steps are not counted.
const MaxNestedSteps = 10000

// tooDeep reports (at steps[i].component) whether using the pipeline at
// path (a KFP graph's file, or "" when inline) would nest more than
// MaxNestingDepth deep.
func (v *validator) tooDeep(i int, path string) bool {
	if len(v.chain) < MaxNestingDepth {
		return false
	}
	name := path
	if name == "" {
		name = "an inline graph"
	}
	v.atValue(v.sp(i, "component"), "pipelines nested more than %d deep: %s uses %s (expected at most %d levels of pipelines used as step components)", MaxNestingDepth, v.chainNames(), name, MaxNestingDepth)
	if path != "" {
		v.loaded[path] = nil
	}
	return true
}

// chainNames is the chain of pipeline files being loaded, "A uses B uses C".
func (v *validator) chainNames() string {
	names := make([]string, len(v.chain))
	for k, l := range v.chain {
		names[k] = l.path
	}
	return strings.Join(names, " uses ")
}

// subPipeline loads the pipeline file f that steps[i] uses as its component
// and returns the component it is to the step: its params as inputs, its
// outputs as outputs.
func (v *validator) subPipeline(i int, f *yamlfile.File, path string) *components.Component {
	if v.recursive(i, path) || v.tooDeep(i, path) {
		return nil
	}
	sub, err := decode(f, v.chain)
	if err != nil {
		v.errs = append(v.errs, err)
		v.loaded[path] = nil
		return nil
	}
	if slices.ContainsFunc(sub.Steps, func(s Step) bool { return s.Finally }) {
		v.atValue(v.sp(i, "component"), "pipeline %s (%s) has finally steps: a pipeline used as a step's component cannot have them (move them to the outer pipeline)", sub.Metadata.Name, path)
		v.loaded[path] = nil
		return nil
	}
	c := sub.component()
	v.loaded[path], v.subFiles[path], v.subs[i] = c, sub, sub
	return c
}

// component is the pipeline as a step's component: its params are the
// inputs (a default makes one optional), its declared outputs the outputs,
// typed as the inner outputs they name.
func (pl *Pipeline) component() *components.Component {
	c := &components.Component{APIVersion: components.APIVersion, Kind: "Component", Metadata: pl.Metadata, Source: pl.Source, Dir: filepath.Dir(pl.Source)}
	for _, name := range pl.ParamOrder {
		prm := pl.Params[name]
		c.Inputs = append(c.Inputs, components.IO{Name: name, Type: prm.Type, Description: prm.Description, Default: prm.Default})
	}
	for _, name := range pl.OutputOrder {
		b := pl.outputs[name]
		if s := pl.Step(b.Step); s != nil && s.Resolved != nil {
			if out, ok := s.Resolved.Output(b.Output); ok {
				out.Name, out.Path = name, ""
				if s.Loop != nil && !components.IsArtifact(out.Type) {
					// A loop step's output, collected: a JSON list.
					out.Type, out.Declared = components.TypeJSON, nil
				}
				c.Outputs = append(c.Outputs, out)
			}
		}
	}
	return c
}

// Output returns the step output that the pipeline's declared output name
// is, in its expanded Steps.
func (pl *Pipeline) Output(name string) (Binding, bool) {
	b, ok := pl.outputs[name]
	return b, ok
}

// nestedStep refuses the options a step whose component is a pipeline
// cannot take: they belong to the steps of that pipeline.
func (v *validator) nestedStep(i int) {
	s := &v.p.Steps[i]
	refuse := func(field string, set bool) {
		if set {
			v.at(v.sp(i, field), "step %q uses pipeline %s as its component: %s is not supported on such a step (set it on the steps of that pipeline)", s.Name, s.Resolved.Metadata.Name, field)
		}
	}
	if s.Loop != nil {
		v.loopedPipeline(i)
	}
	refuse("retries", s.Retries != 0)
	refuse("timeout", s.Timeout.Duration != 0)
	refuse("image", s.Image != "")
	refuse("env", len(s.Env) > 0)
	refuse("secrets", len(s.Secrets) > 0)
	refuse("resources", s.Resources != nil)
	refuse("nodeSelector", len(s.NodeSelector) > 0)
	refuse("tolerations", len(s.Tolerations) > 0)
	refuse("podMetadata", s.PodMetadata != nil)
	refuse("distributed", s.Distributed != nil)
	refuse("trigger", s.AfterCompleted())
}

// loopedPipeline refuses, at steps[i].loop, what a pipeline that a loop
// step uses as its component cannot hold: each of its steps loops over
// the step's items, so none of them loops over a pipeline of its own or is
// a finally step (a loop step of it loops over the product: see expand).
func (v *validator) loopedPipeline(i int) {
	s, sub := &v.p.Steps[i], v.subs[i]
	for _, t := range sub.Steps {
		switch {
		case t.Loop != nil && t.Body != "":
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, and its step %s loops over the steps of %s of its own: a looped pipeline inside a looped pipeline is not supported yet (loop its steps over the product of both lists)", s.Name, sub.Source, t.Name, t.Body)
			return
		case t.Finally:
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, which has finally steps (%s): a looped pipeline's steps run once per item, finally steps once per run (move them to the finally steps of this pipeline)", s.Name, sub.Source, t.Name)
			return
		case t.AfterCompleted():
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, whose step %s has trigger: completed: not supported in a looped pipeline yet (its iterations would each wait for the other steps' iterations, whatever their outcome)", s.Name, sub.Source, t.Name)
			return
		case t.Distributed != nil && t.When != "":
			v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, whose distributed step %s has a when: not supported in a looped pipeline (the condition would hold iteration by iteration, and a distributed step's launcher starts the gang of each iteration)", s.Name, sub.Source, t.Name)
			return
		}
	}
}

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

// expand replaces each step whose component is a pipeline by that
// pipeline's steps (already expanded), named STEP.INNER: their references
// to the pipeline's params become the values the step gives its inputs
// (or the params' defaults), their references to each other and the
// references of other steps to the step's outputs name the expanded steps,
// and each waits for what the step waits for. Loops, caching and records
// then work on the expanded steps as on any other.
func (v *validator) expand() {
	pl := v.p
	if len(v.subs) == 0 {
		return
	}
	nested := 0
	for i := range pl.Steps {
		sub := v.subs[i]
		if sub == nil {
			continue
		}
		if nested += len(sub.Steps); nested > MaxNestedSteps {
			v.atValue(v.sp(i, "component"), "nested pipelines expand to more than %d steps: %s uses %s (%d steps) and the steps before this one add %d (expected at most %d steps from nested pipelines; a pipeline that uses the next one twice doubles at every level)", MaxNestedSteps, v.chainNames(), sub.Source, len(sub.Steps), nested-len(sub.Steps), MaxNestedSteps)
			return
		}
	}
	outer := &rewriter{subs: map[string]*Pipeline{}}
	for i, sub := range v.subs {
		outer.subs[pl.Steps[i].Name] = sub
	}
	var steps []Step
	nMain := 0
	for i := range pl.Steps {
		s := pl.Steps[i]
		after := outer.after(s.After)
		s.After = after
		sub := v.subs[i]
		if sub == nil {
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
		var loop *Loop
		if s.Loop != nil {
			l, err := outer.loop(*s.Loop)
			if err != nil {
				v.at(v.sp(i, "loop"), "%v", err)
				continue
			}
			loop = &l
		}
		when := ""
		if s.When != "" {
			var err error
			if when, err = outer.when(s.When); err != nil {
				v.atValue(v.sp(i, "when"), "%v", err)
				continue
			}
		}
		for _, t := range sub.Steps {
			// A loop step of a looped pipeline: its own item is
			// {{item.inner}}, the pipeline's {{item.outer}} (nestLoop).
			r, nest := inner, loop != nil && t.Loop != nil
			if nest {
				if err := ownItems(&t); err != nil {
					v.at(v.sp(i, "component"), "%v", err)
					continue
				}
				r = inner.outerItems()
			}
			if err := r.step(&t); err != nil {
				if pe := (*paramError)(nil); errors.As(err, &pe) {
					v.atValue(v.sp(i, "inputs", pe.param), "input %q %s (%s, step %s)", pe.param, pe.msg, sub.Source, strings.TrimPrefix(t.Name, inner.prefix))
				} else {
					v.at(v.sp(i, "component"), "%v", err)
				}
				continue
			}
			if len(t.Name) > MaxStepNameLen {
				v.atValue(v.sp(i, "name"), "step %s of %s would be named %s (%d bytes): expected at most %d bytes, as the name becomes a directory of the store and an Argo task's name (shorten step %s or the steps of %s)", strings.TrimPrefix(t.Name, inner.prefix), sub.Source, t.Name, len(t.Name), MaxStepNameLen, s.Name, sub.Source)
				continue
			}
			if t.Name == "run.json" || strings.HasPrefix(t.Name, "run.json"+NestedSep) {
				v.atValue(v.sp(i, "name"), "step %s of %s would be named %s, the key of the run record in the store (rename step %s or %s)", strings.TrimPrefix(t.Name, inner.prefix), sub.Source, t.Name, s.Name, strings.TrimPrefix(t.Name, inner.prefix))
				continue
			}
			var own *Loop
			if loop != nil {
				if err := sameIteration(&t, inner.prefix); err != nil {
					v.at(v.sp(i, "loop"), "step %q loops over the steps of %s: %v", s.Name, sub.Source, err)
					continue
				}
				own = t.Loop // its own, rewritten
				t.Loop, t.Body = loop, s.Name
			}
			outerWhen := when
			if nest {
				l, err := nestLoop(*loop, *own, inner.prefix)
				if err != nil {
					v.at(v.sp(i, "loop"), "step %q loops over the steps of %s, and its step %s loops of its own: %v", s.Name, sub.Source, strings.TrimPrefix(t.Name, inner.prefix), err)
					continue
				}
				t.Loop, t.Nested = &l, true
				if outerWhen, err = mapItems(when, NestOuter); err != nil {
					v.at(v.sp(i, "when"), "%v", err)
					continue
				}
			}
			t.After = append(t.After, after...)
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
				steps = append(steps, t)
				continue
			}
			steps = append(steps, t)
			nMain++
		}
	}
	v.expandMetadata(outer, steps)
	if len(v.errs) > 0 {
		return
	}
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
	if len(v.errs) > 0 {
		return
	}
	pl.Steps, v.nMain = steps, nMain
	pl.byName = make(map[string]int, len(steps))
	for i, s := range steps {
		pl.byName[s.Name] = i
	}
	pl.linkMetadata()
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

// rewriter rewrites the references of a step being expanded.
type rewriter struct {
	// prefix is added to step names: "OUTER." for the steps of a nested
	// pipeline, "" for the steps of the pipeline being expanded.
	prefix string
	// subs are the pipelines steps use, by step name (the pipeline being
	// expanded): references to their outputs become references to the
	// expanded steps.
	subs map[string]*Pipeline
	// params are the values of the nested pipeline's params (nil: params
	// stay as written), types their types.
	params map[string]*yaml.Node
	types  map[string]string
	// paramAlts are the candidates of the params given a oneOf output
	// whole (see OutputDecl), in the outer pipeline's expanded names.
	paramAlts map[string][]Binding
}

// output rewrites a reference to a step's output.
func (r *rewriter) output(b Binding) Binding {
	if sub := r.subs[b.Step]; sub != nil {
		inner := sub.outputs[b.Output]
		return Binding{Step: b.Step + NestedSep + inner.Step, Output: inner.Output}
	}
	return Binding{Step: r.prefix + b.Step, Output: b.Output}
}

// after rewrites a step's after list: a step that uses a pipeline stands
// for the expanded steps of it that no other of them waits for (each of
// the others ends before one of those).
func (r *rewriter) after(names []string) []string {
	var out []string
	for _, a := range names {
		if sub := r.subs[a]; sub != nil {
			for _, t := range sub.leaves() {
				out = append(out, a+NestedSep+t)
			}
			continue
		}
		out = append(out, r.prefix+a)
	}
	return out
}

// leaves are the steps of the pipeline no other step depends on, in order.
func (pl *Pipeline) leaves() []string {
	dep := map[string]bool{}
	for _, s := range pl.Steps {
		for _, d := range s.Deps() {
			dep[d] = true
		}
	}
	var out []string
	for _, s := range pl.Steps {
		if !dep[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}

// step rewrites s in place: its name, inputs, env, when, loop items and
// after list. Maps and slices are copied, never changed.
func (r *rewriter) step(s *Step) error {
	if err := r.stepAlts(s, s.Inputs); err != nil {
		return err
	}
	s.Name = r.prefix + s.Name
	if r.prefix != "" {
		s.After = r.after(s.After)
		if s.Body != "" {
			s.Body = r.prefix + s.Body
		}
	}
	inputs := make(map[string]yaml.Node, len(s.Inputs))
	for _, name := range slices.Sorted(maps.Keys(s.Inputs)) {
		n := s.Inputs[name]
		out, err := r.node(&n)
		if err != nil {
			return fmt.Errorf("step %s: input %q: %w", s.Name, name, err)
		}
		inputs[name] = *out
	}
	s.Inputs = inputs
	secrets := slices.Clone(s.Secrets)
	for k := range secrets {
		if err := r.whole(secrets[k].Ref(), "a Secret's name"); err != nil {
			return fmt.Errorf("step %s: secret %s: %w", s.Name, secrets[k].Env, err)
		}
		name, err := r.text(secrets[k].Secret)
		if err != nil {
			return fmt.Errorf("step %s: secret %s: %w", s.Name, secrets[k].Env, err)
		}
		b, refs, _ := parseBinding(name)
		switch {
		case len(refs) > 0 && !b.IsRef():
			return fmt.Errorf("step %s: secret %s: the Secret's name would be %s: a Secret's name is written in the file, a string param or a step's string output", s.Name, secrets[k].Env, name)
		case b.Step != "" && s.Distributed != nil:
			return fmt.Errorf("step %s: secret %s: the Secret's name would be %s: a distributed step's Secret is named in the file or by a param, not by a step's output", s.Name, secrets[k].Env, name)
		case !b.IsRef() && len(validation.IsDNS1123Subdomain(name)) > 0:
			return fmt.Errorf("step %s: secret %s: invalid Secret name %q", s.Name, secrets[k].Env, name)
		}
		secrets[k].Secret = name
	}
	s.Secrets = secrets
	if refs := s.Resources.Refs(); len(refs) > 0 {
		res := *s.Resources
		for _, f := range RuntimeFields {
			b, ok := refs[f]
			if !ok {
				continue
			}
			if err := r.whole(b, "resources."+f); err != nil {
				return fmt.Errorf("step %s: resources.%s: %w", s.Name, f, err)
			}
			val, err := r.text(b.String())
			if err != nil {
				return fmt.Errorf("step %s: resources.%s: %w", s.Name, f, err)
			}
			if err := CheckResource(f, val); err != nil {
				return fmt.Errorf("step %s: %w", s.Name, err)
			}
			res.setField(f, val)
		}
		s.Resources = &res
	}
	env := slices.Clone(s.Env)
	for k := range env {
		if _, refs, err := parseRefs(env[k].Value); err == nil {
			for _, ref := range refs {
				if err := r.whole(Binding{Param: ref.param, Step: ref.step, Output: ref.output}, "an env value"); err != nil {
					return fmt.Errorf("step %s: env %s: %w", s.Name, env[k].Name, err)
				}
			}
		}
		text, err := r.text(env[k].Value)
		if err != nil {
			return fmt.Errorf("step %s: env %s: %w", s.Name, env[k].Name, err)
		}
		env[k].Value = text
	}
	s.Env = env
	if s.When != "" {
		when, err := r.when(s.When)
		if err != nil {
			return fmt.Errorf("step %s: when: %w", s.Name, err)
		}
		s.When = when
	}
	if s.Loop != nil {
		l := *s.Loop
		if b, err := s.ItemsBinding(); err == nil {
			if err := r.whole(b, "loop.items"); err != nil {
				return fmt.Errorf("step %s: %w", s.Name, err)
			}
		}
		l, err := r.loop(l)
		if err != nil {
			return fmt.Errorf("step %s: %v", s.Name, err)
		}
		s.Loop = &l
	}
	return nil
}

// loop rewrites a loop's items, or each list of its product.
func (r *rewriter) loop(l Loop) (Loop, error) {
	if l.Items.Kind != 0 {
		items, err := r.list(&l.Items)
		if err != nil {
			return l, fmt.Errorf("loop.items: %v", err)
		}
		l.Items = *items
	}
	if p := yamlfile.Deref(&l.Product); p.Kind == yaml.MappingNode {
		prod := *p
		prod.Content = slices.Clone(p.Content)
		for i := 1; i < len(prod.Content); i += 2 {
			list, err := r.list(prod.Content[i])
			if err != nil {
				return l, fmt.Errorf("loop.product.%s: %v", prod.Content[i-1].Value, err)
			}
			prod.Content[i] = list
		}
		l.Product = prod
	}
	return l, nil
}

// list rewrites a loop's list: as node does, a JSON list given as text
// (the value of a param) becoming the list itself (JSON is YAML).
func (r *rewriter) list(n *yaml.Node) (*yaml.Node, error) {
	items, err := r.node(n)
	if err != nil {
		return nil, err
	}
	if items.Kind == yaml.ScalarNode && items.Tag == "!!str" {
		if b, refs, err := parseBinding(items.Value); err == nil && !b.IsRef() && len(refs) == 0 {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(items.Value), &doc); err == nil && len(doc.Content) == 1 {
				items = doc.Content[0]
			}
		}
	}
	return items, nil
}

// node rewrites an input value: a whole {{params.P}} of the nested
// pipeline becomes the value given for P, and the references inside a
// string are rewritten by text.
func (r *rewriter) node(n *yaml.Node) (*yaml.Node, error) {
	n = yamlfile.Deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return n, nil
	}
	b, _, err := parseBinding(n.Value)
	if err != nil {
		return nil, err
	}
	if b.Param != "" && r.params != nil {
		val, ok := r.params[b.Param]
		if !ok {
			return nil, fmt.Errorf("parameter %q has no value", b.Param)
		}
		return val, nil
	}
	text, err := r.text(n.Value)
	if err != nil {
		return nil, err
	}
	out := *n
	out.Value = text
	return &out, nil
}

// text rewrites the references in a text.
func (r *rewriter) text(s string) (string, error) {
	texts, refs, err := parseRefs(s)
	if err != nil {
		return "", err
	}
	if len(refs) == 0 {
		return s, nil
	}
	var b strings.Builder
	// A whole reference is an input's (stepAlts gives it the candidates).
	whole := len(refs) == 1 && texts[0] == "" && texts[1] == ""
	for k, ref := range refs {
		b.WriteString(texts[k])
		if err := r.whole(Binding{Param: ref.param, Step: ref.step, Output: ref.output}, "a text"); err != nil && !whole {
			return "", err
		}
		switch {
		case ref.step != "":
			out := r.output(Binding{Step: ref.step, Output: ref.output})
			b.WriteString(out.String())
		case ref.param != "" && r.params != nil:
			val, err := r.paramText(ref.param)
			if err != nil {
				return "", err
			}
			b.WriteString(val)
		default:
			b.WriteString(ref.String())
		}
	}
	b.WriteString(texts[len(texts)-1])
	return b.String(), nil
}

// paramText is the value given for a nested pipeline's param P, as text
// to put where {{params.P}} was inside a longer text.
func (r *rewriter) paramText(name string) (string, error) {
	n, ok := r.params[name]
	if !ok {
		return "", fmt.Errorf("parameter %q has no value", name)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		// A step output given whole stays a reference inside the text.
		return n.Value, nil
	}
	t := r.types[name]
	if n.Kind != yaml.ScalarNode {
		t = components.TypeJSON
	}
	return components.NodeValue(t, n)
}

// paramError is a value given to a nested pipeline's param that the
// pipeline cannot use where it uses it.
type paramError struct{ param, msg string }

func (e *paramError) Error() string { return fmt.Sprintf("parameter %q %s", e.param, e.msg) }

// when rewrites a condition (each of its && parts) side by side.
func (r *rewriter) when(s string) (string, error) {
	conds, _, err := ParseWhen(s)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, c := range conds {
		p, err := r.comparison(c)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " && "), nil
}

// comparison rewrites one comparison of a condition side by side.
func (r *rewriter) comparison(c Condition) (string, error) {
	side := func(b Binding) (string, error) {
		if err := r.whole(b, "a condition"); err != nil {
			return "", err
		}
		switch {
		case b.Step != "":
			return r.output(b).String(), nil
		case b.Param != "" && r.params != nil:
			n, ok := r.params[b.Param]
			if !ok {
				return "", fmt.Errorf("parameter %q has no value", b.Param)
			}
			if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
				if nb, _, err := parseBinding(n.Value); err == nil && nb.IsRef() {
					return nb.String(), nil // the outer pipeline's, rewritten already
				}
				if it, ok := wholeItem(n.Value); ok {
					return it.String(), nil // the item of the loop step using the pipeline
				}
			}
			val, err := r.paramText(b.Param)
			if err != nil {
				return "", err
			}
			if val == "" || strings.ContainsAny(val, "=<>") || strings.Contains(val, "&&") || strings.Contains(val, "{{") || strings.TrimSpace(strings.Trim(val, `'"`)) != val {
				return "", &paramError{param: b.Param, msg: fmt.Sprintf("is given %s, which the pipeline's condition cannot compare as a literal", quoteShort(val))}
			}
			return val, nil
		}
		return b.String(), nil
	}
	left, err := side(c.Left)
	if err != nil {
		return "", err
	}
	right, err := side(c.Right)
	if err != nil {
		return "", err
	}
	return left + " " + c.Op + " " + right, nil
}
