package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

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
