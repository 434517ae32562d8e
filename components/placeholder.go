package components

import (
	"fmt"
	"strings"
)

// Placeholders in command, args and env values:
//
//	{{inputs.NAME}}        the value of an input parameter
//	{{inputs.NAME.path}}   the local path of an input artifact
//	{{inputs.NAME.uri}}    the store URI of an input artifact
//	{{outputs.NAME.path}}  where the program writes an output (artifact or parameter)
//	{{outputs.NAME.uri}}   the store URI an output artifact is published to
//
// Text is parsed once: values substituted into it are never parsed again, so
// a parameter value containing "{{" reaches the program literally.

// Ref is one placeholder.
type Ref struct {
	// Dir is "inputs" or "outputs".
	Dir string
	// Name is the input's or output's name.
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

// segment is literal text or a placeholder.
type segment struct {
	text string
	ref  *Ref
}

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
			return nil, fmt.Errorf("unclosed placeholder in %q (want {{inputs.NAME}}, {{inputs.NAME.path}} or {{outputs.NAME.path}})", s)
		}
		if i > 0 {
			segs = append(segs, segment{text: s[:i]})
		}
		body := strings.TrimSpace(s[i+2 : i+j])
		parts := strings.Split(body, ".")
		ref := &Ref{}
		switch {
		case len(parts) == 2 && parts[0] == "inputs":
			ref.Dir, ref.Name = parts[0], parts[1]
		case len(parts) == 3 && (parts[0] == "inputs" || parts[0] == "outputs") && (parts[2] == "path" || parts[2] == "uri"):
			ref.Dir, ref.Name, ref.Field = parts[0], parts[1], parts[2]
		default:
			return nil, fmt.Errorf("unknown placeholder {{%s}} (want {{inputs.NAME}}, {{inputs.NAME.path}}, {{inputs.NAME.uri}}, {{outputs.NAME.path}} or {{outputs.NAME.uri}})", body)
		}
		segs = append(segs, segment{ref: ref})
		s = s[i+j+2:]
	}
}

// checkRefs reports the placeholders of s that do not fit the component.
func (c *Component) checkRefs(s string) error {
	segs, err := parseTemplate(s)
	if err != nil {
		return err
	}
	for _, seg := range segs {
		r := seg.ref
		if r == nil {
			continue
		}
		if r.Dir == "inputs" {
			in, ok := c.Input(r.Name)
			switch {
			case !ok:
				return fmt.Errorf("%s names no input (inputs: %s)", r, names(c.Inputs))
			case IsArtifact(in.Type) && r.Field == "":
				return fmt.Errorf("%s: input %q is an artifact (%s): use {{inputs.%s.path}} or {{inputs.%s.uri}}", r, r.Name, in.Type, r.Name, r.Name)
			case !IsArtifact(in.Type) && r.Field != "":
				return fmt.Errorf("%s: input %q is a parameter (%s): use {{inputs.%s}}", r, r.Name, in.Type, r.Name)
			}
			continue
		}
		out, ok := c.Output(r.Name)
		switch {
		case !ok:
			return fmt.Errorf("%s names no output (outputs: %s)", r, names(c.Outputs))
		case r.Field == "uri" && !IsArtifact(out.Type):
			return fmt.Errorf("%s: output %q is a parameter: use {{outputs.%s.path}}", r, r.Name, r.Name)
		}
	}
	return nil
}

func names(ios []IO) string {
	if len(ios) == 0 {
		return "none"
	}
	var n []string
	for _, io := range ios {
		n = append(n, io.Name)
	}
	return strings.Join(n, ", ")
}

// Values are what placeholders resolve to for one invocation.
type Values struct {
	// Params are input parameter values (canonical strings). An optional
	// input without a value is absent.
	Params map[string]string
	// InputPaths and InputURIs locate input artifacts.
	InputPaths, InputURIs map[string]string
	// OutputPaths and OutputURIs locate outputs.
	OutputPaths, OutputURIs map[string]string
}

func (v Values) lookup(r *Ref) (string, bool) {
	var m map[string]string
	switch {
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
func Expand(s string, v Values) (out string, ok bool, err error) {
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
// an optional input without a value is dropped.
func (c *Component) Argv(v Values) ([]string, error) {
	var argv []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		out, ok, err := Expand(s, v)
		if err != nil {
			return nil, err
		}
		if ok {
			argv = append(argv, out)
		}
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("component %s: empty command", c.Metadata.Name)
	}
	return argv, nil
}

// Environ resolves the component's env into NAME=value pairs.
func (c *Component) Environ(v Values) ([]string, error) {
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
