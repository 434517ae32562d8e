package kfpv1

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
)

// KFP v1 command-line arguments as kfp.components resolves them
// (_resolve_command_line_and_paths), converted to pipectl templates:
//
//	a string, number or bool   the text as written (macros mapped)
//	{inputValue: IN}           {{inputs.in}}: the value; dropped when absent
//	{inputPath: IN}            {{inputs.in.path}}: the file; for a value, a
//	                           file pipectl writes it to
//	{inputUri: IN}             {{inputs.in.uri}}
//	{outputPath: OUT}          {{outputs.out.path}}
//	{outputUri: OUT}           {{outputs.out.uri}}
//	{concat: [ITEMS]}          one element: the items' texts joined
//	{if: {cond: C, then: T, else: E}}
//	                           the elements of T when C holds, else those of E
//	                           (each a list or one item; else may be left out).
//	                           C is true/false (decided when the file is
//	                           loaded), {isPresent: IN} (the input has a
//	                           value, given or default) or {inputValue: IN}
//	                           (its value is true: see ParseBoolWord); it
//	                           becomes an {{if}} ... {{else}} ... {{end}} block.
//
// Argo's macros in literal text: {{workflow.uid}} and {{workflow.name}} are
// the run id ({{run.id}}), {{pod.name}} the pod's name ({{pod.name}}).

// kfpV2Placeholders are KFP v2 placeholders pipectl does not run
// (executorInput it does: kfp_v2placeholders.go).
var kfpV2Placeholders = []string{"inputMetadata", "outputMetadata", "inputOutputPortName"}

const kfpSupported = "inputValue, inputPath, inputUri, outputPath, outputUri, concat, if"

// kfpUsage returns, by KFP input name, the placeholders that read each input.
func kfpUsage(list []yaml.Node) map[string]map[string]bool {
	usage := map[string]map[string]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			for _, m := range v2ParamUseRE().FindAllStringSubmatch(n.Value, -1) {
				if usage[m[1]] == nil {
					usage[m[1]] = map[string]bool{}
				}
				usage[m[1]]["inputValue"] = true
			}
		case yaml.SequenceNode:
			for _, e := range n.Content {
				walk(e)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, val := n.Content[i].Value, n.Content[i+1]
				switch key {
				case "inputValue", "inputPath", "inputUri", "isPresent":
					if usage[val.Value] == nil {
						usage[val.Value] = map[string]bool{}
					}
					usage[val.Value][key] = true
				default:
					walk(val)
				}
			}
		}
	}
	for i := range list {
		walk(&list[i])
	}
	return usage
}

// args converts a command or args list; problems are added to errs.
func (cv *kfpConverter) args(list []yaml.Node, key string, errs []error) ([]string, []error) {
	var out []string
	for j := range list {
		elems, err := cv.arg(&list[j], components.JoinField(cv.field, key, j), false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, elems...)
	}
	return out, errs
}

// arg converts one argument into the elements it stands for. Inside a
// concat (inConcat) it must be exactly one.
func (cv *kfpConverter) arg(n *yaml.Node, field string, inConcat bool) ([]string, error) {
	f := cv.f
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil // KFP skips a None argument
		}
		s, err := cv.literal(n, field)
		return []string{s}, err
	case yaml.MappingNode:
	default:
		return nil, f.Errorf(n, field, "expected a string or a placeholder such as {inputValue: NAME}, got a list")
	}
	if len(n.Content) != 2 {
		return nil, f.Errorf(n, field, "expected a placeholder: a mapping of one key (%s)", kfpSupported)
	}
	key, val := n.Content[0], n.Content[1]
	field = components.JoinField(field, key.Value)
	switch key.Value {
	case "inputValue", "inputPath", "inputUri":
		port, err := cv.port(cv.inputs, "input", key.Value, val, field)
		if err != nil {
			return nil, err
		}
		switch key.Value {
		case "inputValue":
			return []string{"{{inputs." + port.name + "}}"}, nil
		case "inputPath":
			return []string{"{{inputs." + port.name + ".path}}"}, nil
		}
		if port.param {
			return nil, f.Errorf(key, field, "input %q is a value, which has no URI: read it with inputValue or inputPath", val.Value)
		}
		return []string{"{{inputs." + port.name + ".uri}}"}, nil
	case "outputPath", "outputUri":
		port, err := cv.port(cv.outputs, "output", key.Value, val, field)
		if err != nil {
			return nil, err
		}
		if key.Value == "outputUri" {
			if port.param {
				return nil, f.Errorf(key, field, "output %q is a value, which has no URI: write it with outputPath", val.Value)
			}
			return []string{"{{outputs." + port.name + ".uri}}"}, nil
		}
		return []string{"{{outputs." + port.name + ".path}}"}, nil
	case "concat":
		if val.Kind != yaml.SequenceNode {
			return nil, f.Errorf(val, field, "expected a list of items to join")
		}
		var b strings.Builder
		for i, item := range val.Content {
			elems, err := cv.arg(item, components.JoinField(field, i), true)
			if err != nil {
				return nil, err
			}
			b.WriteString(strings.Join(elems, ""))
		}
		return []string{b.String()}, nil
	case "if":
		if inConcat {
			return nil, f.Errorf(key, field, "an if inside a concat is not supported: put the concat inside the if's then and else")
		}
		return cv.ifArg(key, val, field)
	case "isPresent":
		return nil, f.Errorf(key, field, "isPresent is supported as the cond of an if, not as an argument")
	}
	if key.Value == "executorInput" {
		return []string{"{{executor.input}}"}, nil
	}
	if slices.Contains(kfpV2Placeholders, key.Value) {
		return nil, f.Errorf(key, field, "KFP v2 placeholder %s is not supported: pipectl runs KFP v1 components (supported: %s)", key.Value, kfpSupported)
	}
	return nil, f.Errorf(key, field, "unknown KFP placeholder %q (supported: %s)", key.Value, kfpSupported)
}

// port resolves the input or output a placeholder names.
func (cv *kfpConverter) port(ports map[string]kfpPort, kind, placeholder string, val *yaml.Node, field string) (kfpPort, error) {
	if val.Kind != yaml.ScalarNode {
		return kfpPort{}, cv.f.Errorf(val, field, "expected the name of an %s", kind)
	}
	p, ok := ports[val.Value]
	if !ok {
		var names []string
		for n := range ports {
			names = append(names, n)
		}
		slices.Sort(names)
		list := strings.Join(names, ", ")
		if list == "" {
			list = "none"
		}
		return kfpPort{}, cv.f.Errorf(val, field, "%s %q names no %s of the component (%ss: %s)", placeholder, val.Value, kind, kind, list)
	}
	return p, nil
}

// ifArg converts {if: {cond, then, else}}.
func (cv *kfpConverter) ifArg(key, n *yaml.Node, field string) ([]string, error) {
	f := cv.f
	var cond, then, els *yaml.Node
	if n.Kind != yaml.MappingNode {
		return nil, f.Errorf(n, field, "expected {cond: CONDITION, then: [ARGS], else: [ARGS]}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "cond":
			cond = v
		case "then":
			then = v
		case "else":
			els = v
		default:
			return nil, f.Errorf(k, components.JoinField(field, k.Value), "unknown field %q (expected one of: cond, then, else)", k.Value)
		}
	}
	if cond == nil || then == nil {
		return nil, f.Errorf(key, field, "missing: an if needs cond and then")
	}
	branch := func(b *yaml.Node, name string) ([]string, error) {
		if b == nil {
			return nil, nil
		}
		if b.Kind != yaml.SequenceNode {
			return cv.arg(b, components.JoinField(field, name), false)
		}
		var out []string
		for i, item := range b.Content {
			elems, err := cv.arg(item, components.JoinField(field, name, i), false)
			if err != nil {
				return nil, err
			}
			out = append(out, elems...)
		}
		return out, nil
	}
	marker, constant, err := cv.cond(cond, components.JoinField(field, "cond"))
	if err != nil {
		return nil, err
	}
	thenElems, err := branch(then, "then")
	if err != nil {
		return nil, err
	}
	elseElems, err := branch(els, "else")
	if err != nil {
		return nil, err
	}
	if marker == "" {
		if constant {
			return thenElems, nil
		}
		return elseElems, nil
	}
	out := append([]string{marker}, thenElems...)
	if len(elseElems) > 0 {
		out = append(append(out, "{{else}}"), elseElems...)
	}
	return append(out, "{{end}}"), nil
}

// cond converts an if's condition: the {{if}} marker, or for a constant
// condition "" and its value.
func (cv *kfpConverter) cond(n *yaml.Node, field string) (marker string, constant bool, err error) {
	f := cv.f
	if n.Kind == yaml.ScalarNode {
		b, err := components.ParseBoolWord(n.Value)
		if err != nil {
			return "", false, f.Errorf(n, field, "%v", err)
		}
		return "", b, nil
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		key, val := n.Content[0], n.Content[1]
		switch key.Value {
		case "isPresent", "inputValue":
			port, err := cv.port(cv.inputs, "input", key.Value, val, components.JoinField(field, key.Value))
			if err != nil {
				return "", false, err
			}
			if key.Value == "isPresent" {
				return "{{if present inputs." + port.name + "}}", false, nil
			}
			return "{{if inputs." + port.name + "}}", false, nil
		}
	}
	return "", false, f.Errorf(n, field, "expected a condition: true or false, {isPresent: INPUT} or {inputValue: INPUT}")
}

// literal returns the text of a literal argument or env value as a pipectl
// template: the text itself, with Argo's macros mapped. Any other "{{" is an
// error, as it is in KFP v1 (Argo would reject it).
func (cv *kfpConverter) literal(n *yaml.Node, field string) (string, error) {
	s := n.Value
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		offset := len(n.Value) - len(s) + i
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", cv.errorAt(n, offset, field, "unclosed %q in %q: Argo reads {{ as the start of a variable", "{{", n.Value)
		}
		body := strings.TrimSpace(s[i+2 : i+j])
		switch {
		case body == "workflow.uid" || body == "workflow.name":
			b.WriteString("{{run.id}}")
		case body == "pod.name":
			b.WriteString("{{pod.name}}")
		case strings.HasPrefix(body, "$"):
			t, err := cv.v2Placeholder(body)
			if err != nil {
				return "", cv.errorAt(n, offset, field, "%v", err)
			}
			b.WriteString(t)
		default:
			return "", cv.errorAt(n, offset, field, "Argo variable {{%s}} is not supported (supported: {{workflow.uid}}, {{workflow.name}}, {{pod.name}})", body)
		}
		s = s[i+j+2:]
	}
}

// errorAt reports a problem at byte offset of the text of scalar n: at its
// own column when n is on one line.
func (cv *kfpConverter) errorAt(n *yaml.Node, offset int, field, format string, args ...any) error {
	e := cv.f.Errorf(n, field, format, args...)
	if !strings.Contains(n.Value, "\n") && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		e.Column += offset
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			e.Column++
		}
	}
	return e
}
