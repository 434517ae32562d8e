package components

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Placeholders in command, args and env values:
//
//	{{inputs.NAME}}        the value of an input parameter
//	{{inputs.NAME.path}}   the local path of an input artifact
//	{{inputs.NAME.uri}}    the store URI of an input artifact
//	{{outputs.NAME.path}}  where the program writes an output (artifact or parameter)
//	{{outputs.NAME.uri}}   the store URI an output artifact is published to
//	{{run.id}}             the run id
//	{{step.name}}          the step's name
//	{{pod.name}}           the pod's name on Kubernetes; locally RUN-STEP
//	{{executor.input}}     KFP v2's executor input JSON (KFP's {{$}})
//
// {{inputs.NAME.path}} of a parameter is the path of a file holding its
// value, which pipectl writes before the program starts.
//
// Text is parsed once: values substituted into it are never parsed again, so
// a parameter value containing "{{" reaches the program literally.
//
// Conditional elements (command and args only): an element that is exactly
// {{if COND}} starts a block that ends at an element {{end}}, with an
// optional {{else}} element between; blocks nest. The elements of the
// block's first part are kept when COND holds, those of the else part when
// it does not; the markers themselves are dropped. COND is
//
//	present inputs.NAME    the input has a value (given, or its default)
//	inputs.NAME            the input's value is true: y, yes, t, true, on or 1
//	                       (any case); n, no, f, false, off, 0, the empty
//	                       string or no value are false, anything else is an error

// Ref is one placeholder.
type Ref struct {
	// Dir is "inputs" or "outputs", or "run", "step" or "pod" for the names
	// of the run ({{run.id}}), step ({{step.name}}) and pod ({{pod.name}}).
	Dir string
	// Name is the input's or output's name ("id" or "name" for the others).
	Name string
	// Field is "", "path" or "uri".
	Field string
}

func (r Ref) String() string {
	s := "{{" + r.Dir + "." + r.Name
	if r.Field != "" {
		s += "." + r.Field
	}
	return s + "}}"
}

// segment is literal text, a placeholder or a conditional marker.
type segment struct {
	text string
	ref  *Ref
	mark *marker
}

// marker is an {{if COND}}, {{else}} or {{end}} element.
type marker struct {
	// kind is "if", "else" or "end".
	kind string
	// present is true for {{if present inputs.NAME}}.
	present bool
	// input names the input of an if's condition.
	input string
}

const placeholderForms = "{{inputs.NAME}}, {{inputs.NAME.path}}, {{inputs.NAME.uri}}, {{outputs.NAME.path}}, {{outputs.NAME.uri}}, {{run.id}}, {{step.name}}, {{pod.name}}, {{executor.input}}, or the elements {{if COND}}, {{else}}, {{end}}"

// parseTemplate splits s into literal text and placeholders.
func parseTemplate(s string) ([]segment, error) {
	var segs []segment
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			if s != "" {
				segs = append(segs, segment{text: s})
			}
			return segs, nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("unclosed placeholder in %q (want %s)", s, placeholderForms)
		}
		if i > 0 {
			segs = append(segs, segment{text: s[:i]})
		}
		body := strings.TrimSpace(s[i+2 : i+j])
		if m, ok, err := parseMarker(body); ok || err != nil {
			if err != nil {
				return nil, err
			}
			if i > 0 || len(s) > i+j+2 || len(segs) > 0 {
				return nil, fmt.Errorf("{{%s}} must be a whole element, not part of %q", body, s)
			}
			return []segment{{mark: m}}, nil
		}
		parts := strings.Split(body, ".")
		ref := &Ref{}
		switch {
		case len(parts) == 2 && parts[0] == "inputs":
			ref.Dir, ref.Name = parts[0], parts[1]
		case len(parts) == 3 && (parts[0] == "inputs" || parts[0] == "outputs") && (parts[2] == "path" || parts[2] == "uri"):
			ref.Dir, ref.Name, ref.Field = parts[0], parts[1], parts[2]
		case body == "executor.input":
			ref.Dir, ref.Name = parts[0], parts[1]
		case body == "run.id" || body == "step.name" || body == "pod.name":
			ref.Dir, ref.Name = parts[0], parts[1]
		default:
			return nil, fmt.Errorf("unknown placeholder {{%s}} (want %s)", body, placeholderForms)
		}
		segs = append(segs, segment{ref: ref})
		s = s[i+j+2:]
	}
}

// parseMarker reads the body of an {{if COND}}, {{else}} or {{end}}
// element; ok is false for other bodies.
func parseMarker(body string) (m *marker, ok bool, err error) {
	switch {
	case body == "else" || body == "end":
		return &marker{kind: body}, true, nil
	case body == "if" || strings.HasPrefix(body, "if "):
		f := strings.Fields(body)
		m := &marker{kind: "if"}
		if len(f) == 3 && f[1] == "present" {
			m.present, f = true, f[1:]
		}
		if len(f) != 2 || !strings.HasPrefix(f[1], "inputs.") || strings.Count(f[1], ".") != 1 {
			return nil, true, fmt.Errorf("{{%s}}: expected {{if present inputs.NAME}} or {{if inputs.NAME}}", body)
		}
		m.input = strings.TrimPrefix(f[1], "inputs.")
		return m, true, nil
	}
	return nil, false, nil
}

// checkList reports the first problem of a command, args or env list:
// placeholders that do not fit the component, and for command and args
// (lists) unbalanced {{if}}, {{else}} and {{end}} elements, which env
// values (list false) may not hold.
func (sig signature) checkList(items []string, list bool) (int, error) {
	var open []bool // per open block: whether its {{else}} was seen
	for i, s := range items {
		segs, err := parseTemplate(s)
		if err != nil {
			return i, err
		}
		if len(segs) == 1 && segs[0].mark != nil {
			m := segs[0].mark
			switch {
			case !list:
				return i, fmt.Errorf("{{%s}} may only be a command or args element", m.kind)
			case m.kind == "if":
				if _, ok := findIO(sig.inputs, m.input); !ok {
					return i, fmt.Errorf("{{if}} names input %q, which the component does not declare (inputs: %s)", m.input, names(sig.inputs))
				}
				open = append(open, false)
			case len(open) == 0:
				return i, fmt.Errorf("{{%s}} without an {{if}}", m.kind)
			case m.kind == "else" && open[len(open)-1]:
				return i, fmt.Errorf("a second {{else}} in one {{if}}")
			case m.kind == "else":
				open[len(open)-1] = true
			default:
				open = open[:len(open)-1]
			}
			continue
		}
		if err := sig.checkRefs(s); err != nil {
			return i, err
		}
	}
	if len(open) > 0 {
		return len(items) - 1, fmt.Errorf("{{if}} without {{end}}")
	}
	return 0, nil
}

// checkRefs reports the placeholders of s that do not fit the component.
func (sig signature) checkRefs(s string) error {
	segs, err := parseTemplate(s)
	if err != nil {
		return err
	}
	for _, seg := range segs {
		r := seg.ref
		if seg.mark != nil {
			return fmt.Errorf("{{%s}} may only be a whole command or args element", seg.mark.kind)
		}
		if r == nil || r.Dir == "run" || r.Dir == "step" || r.Dir == "pod" || r.Dir == "executor" {
			continue
		}
		if r.Dir == "inputs" {
			in, ok := findIO(sig.inputs, r.Name)
			switch {
			case !ok:
				return fmt.Errorf("%s names no input (inputs: %s)", r, names(sig.inputs))
			case IsArtifact(in.Type) && r.Field == "":
				return fmt.Errorf("%s: input %q is an artifact (%s): use {{inputs.%s.path}} or {{inputs.%s.uri}}", r, r.Name, in.Type, r.Name, r.Name)
			case !IsArtifact(in.Type) && r.Field == "uri":
				return fmt.Errorf("%s: input %q is a parameter (%s): use {{inputs.%s}} or {{inputs.%s.path}}", r, r.Name, in.Type, r.Name, r.Name)
			}
			continue
		}
		out, ok := findIO(sig.outputs, r.Name)
		switch {
		case !ok:
			return fmt.Errorf("%s names no output (outputs: %s)", r, names(sig.outputs))
		case r.Field == "uri" && !IsArtifact(out.Type):
			return fmt.Errorf("%s: output %q is a parameter: use {{outputs.%s.path}}", r, r.Name, r.Name)
		}
	}
	return nil
}

func names(ios []ProgramIO) string {
	if len(ios) == 0 {
		return "none"
	}
	var n []string
	for _, io := range ios {
		n = append(n, io.Name)
	}
	return strings.Join(n, ", ")
}

// Placeholders are the values placeholders resolve to for one invocation.
type Placeholders struct {
	// Params are input parameter values (canonical strings). An optional
	// input without a value is absent.
	Params map[string]string
	// InputPaths and InputURIs locate input artifacts.
	InputPaths, InputURIs map[string]string
	// InputLists are the numbers of artifacts of the inputs given the
	// artifacts of a loop step's iterations (a directory of <i> entries),
	// by input name: KFP's artifact lists.
	InputLists map[string]int
	// InputMetadata are the metadata of input artifacts that have some
	// (Invocation.Metadata), for the executor input.
	InputMetadata map[string]json.RawMessage
	// OutputPaths and OutputURIs locate outputs.
	OutputPaths, OutputURIs map[string]string
	// Run, Step and Pod are the values of {{run.id}}, {{step.name}} and {{pod.name}}.
	Run, Step, Pod string
	// OutputDir is the rank's output directory; ExecutorInput the value of
	// {{executor.input}}, which Argv and Environ make (kfpv2_executor.go).
	OutputDir, ExecutorInput string
}

func (v Placeholders) lookup(r *Ref) (string, bool) {
	var m map[string]string
	switch {
	case r.Dir == "run":
		return v.Run, v.Run != ""
	case r.Dir == "step":
		return v.Step, v.Step != ""
	case r.Dir == "pod":
		return v.Pod, v.Pod != ""
	case r.Dir == "executor":
		return v.ExecutorInput, v.ExecutorInput != ""
	case r.Dir == "inputs" && r.Field == "":
		m = v.Params
	case r.Dir == "inputs" && r.Field == "path":
		m = v.InputPaths
	case r.Dir == "inputs":
		m = v.InputURIs
	case r.Field == "path":
		m = v.OutputPaths
	default:
		m = v.OutputURIs
	}
	s, ok := m[r.Name]
	return s, ok
}

// Expand resolves the placeholders of s. ok is false when s names an input
// that has no value (an optional input left out): the caller drops s.
func Expand(s string, v Placeholders) (out string, ok bool, err error) {
	segs, err := parseTemplate(s)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, seg := range segs {
		if seg.ref == nil {
			b.WriteString(seg.text)
			continue
		}
		if seg.mark != nil {
			return "", false, fmt.Errorf("{{%s}} may only be a whole command or args element", seg.mark.kind)
		}
		val, found := v.lookup(seg.ref)
		if !found {
			if seg.ref.Dir == "inputs" {
				return "", false, nil
			}
			return "", false, fmt.Errorf("no value for %s", seg.ref)
		}
		b.WriteString(val)
	}
	return b.String(), true, nil
}

// Argv resolves command and args into the program's argv. An element naming
// an optional input without a value is dropped, and so are the elements of
// the part of each {{if}} block whose condition says so.
func (c *Program) Argv(v Placeholders) ([]string, error) {
	if err := c.withExecutorInput(&v); err != nil {
		return nil, err
	}
	var argv []string
	for _, list := range [][]string{c.Command, c.Args} {
		out, err := expandList(list, v)
		if err != nil {
			return nil, err
		}
		argv = append(argv, out...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("component %s: empty command", c.Name)
	}
	return argv, nil
}

// expandList resolves one list of elements with conditional blocks.
func expandList(list []string, v Placeholders) ([]string, error) {
	var out []string
	// keep holds, per open block, whether its current part is kept; an
	// element is kept when every enclosing part is.
	var keep []bool
	kept := func() bool { return !slices.Contains(keep, false) }
	for _, s := range list {
		segs, err := parseTemplate(s)
		if err != nil {
			return nil, err
		}
		if len(segs) == 1 && segs[0].mark != nil {
			m := segs[0].mark
			switch {
			case m.kind == "if":
				cond := false
				if kept() {
					if cond, err = v.condition(m); err != nil {
						return nil, err
					}
				}
				keep = append(keep, cond)
			case len(keep) == 0:
				return nil, fmt.Errorf("{{%s}} without an {{if}}", m.kind)
			case m.kind == "else":
				keep[len(keep)-1] = !keep[len(keep)-1]
			default:
				keep = keep[:len(keep)-1]
			}
			continue
		}
		if !kept() {
			continue
		}
		e, ok, err := Expand(s, v)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	if len(keep) > 0 {
		return nil, fmt.Errorf("{{if}} without {{end}}")
	}
	return out, nil
}

// condition evaluates the condition of an {{if}} marker.
func (v Placeholders) condition(m *marker) (bool, error) {
	val, ok := v.Params[m.input]
	if !ok {
		_, ok = v.InputPaths[m.input]
		if m.present || !ok {
			return ok, nil
		}
		return false, fmt.Errorf("{{if inputs.%s}}: input %q is an artifact, not a value", m.input, m.input)
	}
	if m.present {
		return true, nil
	}
	b, err := ParseBoolWord(val)
	if err != nil {
		return false, fmt.Errorf("{{if inputs.%s}}: %v", m.input, err)
	}
	return b, nil
}

// ParseBoolWord reads a condition's value the way KFP v1 does: y, yes, t,
// true, on and 1 are true, n, no, f, false, off, 0 and "" false, in any case.
func ParseBoolWord(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "y", "yes", "t", "true", "on", "1":
		return true, nil
	case "", "n", "no", "f", "false", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("expected a truth value (true/false, yes/no, on/off, 1/0), got %q", s)
}

// Environ resolves the component's env into NAME=value pairs.
func (c *Program) Environ(v Placeholders) ([]string, error) {
	if err := c.withExecutorInput(&v); err != nil {
		return nil, err
	}
	var env []string
	for _, e := range c.Env {
		out, ok, err := Expand(e.Value, v)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			env = append(env, e.Name+"="+out)
		}
	}
	return env, nil
}
