package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"pipectl.dev/pipectl/components"
)

// Binding is the value a step gives one component input: a literal (which
// may embed {{params.NAME}}), a whole parameter, or a step's output.
type Binding struct {
	// Literal is the value's text when it is not a whole reference.
	Literal string
	// Param names the pipeline parameter the value is.
	Param string
	// Step and Output name the step output the value is.
	Step, Output string
	// Item is set, on a side of a condition only, for a whole {{item}}
	// (Field "") or {{item.FIELD}}: a loop step's when compares it
	// iteration by iteration. It is no whole reference (IsRef).
	Item  bool
	Field string
}

// IsRef reports whether the binding is a whole reference.
func (b Binding) IsRef() bool { return b.Param != "" || b.Step != "" }

func (b Binding) String() string {
	switch {
	case b.Param != "":
		return "{{params." + b.Param + "}}"
	case b.Step != "":
		return "{{steps." + b.Step + ".outputs." + b.Output + "}}"
	case b.Item:
		return ref{item: true, field: b.Field}.String()
	default:
		return b.Literal
	}
}

// ref is one {{...}} reference in pipeline text.
type ref struct {
	param        string
	step, output string
	// item is set for {{item}} and {{item.FIELD}}; field is FIELD.
	item  bool
	field string
	// run is the field of a {{run.FIELD}} reference.
	run string
}

// Fields of the run a finally step may read, as {{run.FIELD}}.
const (
	// RunStatus is the run's status once its DAG ended: Succeeded, Failed or Cancelled.
	RunStatus = "status"
	// RunID is the run's id, which any step may read (KFP's
	// {{$.pipeline_job_name}}, {{$.pipeline_job_uuid}} and
	// {{$.pipeline_job_resource_name}} in a task's constant).
	RunID = "id"
	// RunFailedSteps is a JSON list of the names of the failed steps
	// (iterations as STEP[i]), in the pipeline's order.
	RunFailedSteps = "failedSteps"
	// RunScheduledTime is the time a scheduled run was scheduled for, in
	// RFC 3339 (the schedule's zone); any step may read it. A run started
	// by hand has its start time (UTC).
	RunScheduledTime = "scheduledTime"
)

// refForms lists the references pipeline text may hold, for messages.
const refForms = "{{params.NAME}}, {{steps.STEP.outputs.OUTPUT}}, {{item}}, {{item.FIELD}}, {{run.id}}, {{run.scheduledTime}} or {{run.status}}/{{run.failedSteps}}"

// String is the reference as pipeline text writes it.
func (r ref) String() string {
	switch {
	case r.item && r.field != "":
		return "{{item." + r.field + "}}"
	case r.item:
		return "{{item}}"
	case r.run != "":
		return "{{run." + r.run + "}}"
	}
	return Binding{Param: r.param, Step: r.step, Output: r.output}.String()
}

// parseRefs splits s into text and references.
func parseRefs(s string) (texts []string, refs []ref, err error) {
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return append(texts, s), refs, nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return nil, nil, fmt.Errorf("unclosed reference in %q (want %s)", s, refForms)
		}
		texts = append(texts, s[:i])
		body := strings.TrimSpace(s[i+2 : i+j])
		parts := strings.Split(body, ".")
		switch {
		case strings.ContainsAny(body, "{}"):
			// "{{params.} }}" would name a parameter "}", which could never
			// be written back as a reference.
			return nil, nil, fmt.Errorf("unknown reference {{%s}}: a name cannot hold { or } (want %s)", body, refForms)
		case len(parts) == 2 && parts[0] == "params" && parts[1] != "":
			refs = append(refs, ref{param: parts[1]})
		case len(parts) >= 4 && parts[0] == "steps" && parts[len(parts)-2] == "outputs" && !slices.Contains(parts[1:], ""):
			// A step inside a nested pipeline is OUTER.INNER (see Expand).
			refs = append(refs, ref{step: strings.Join(parts[1:len(parts)-2], "."), output: parts[len(parts)-1]})
		case parts[0] == "item" && !slices.Contains(parts[1:], ""):
			refs = append(refs, ref{item: true, field: strings.Join(parts[1:], ".")})
		case len(parts) == 2 && parts[0] == "run" && (parts[1] == RunStatus || parts[1] == RunFailedSteps || parts[1] == RunID || parts[1] == RunScheduledTime):
			refs = append(refs, ref{run: parts[1]})
		default:
			return nil, nil, fmt.Errorf("unknown reference {{%s}} (want %s)", body, refForms)
		}
		s = s[i+j+2:]
	}
}

// wholeItem returns the reference s is when s is exactly one {{item}} or
// {{item.FIELD}}.
func wholeItem(s string) (ref, bool) {
	texts, refs, err := parseRefs(s)
	if err != nil || len(refs) != 1 || !refs[0].item || texts[0] != "" || texts[1] != "" {
		return ref{}, false
	}
	return refs[0], true
}

// parseBinding reads one step input value: a whole reference, or a
// literal whose text may embed references (a step output's value inside a
// longer text: "n={{steps.a.outputs.n}}").
func parseBinding(s string) (Binding, []ref, error) {
	texts, refs, err := parseRefs(s)
	if err != nil {
		return Binding{}, nil, err
	}
	if len(refs) == 1 && texts[0] == "" && texts[1] == "" && (refs[0].param != "" || refs[0].step != "") {
		r := refs[0]
		return Binding{Param: r.param, Step: r.step, Output: r.output}, refs, nil
	}
	return Binding{Literal: s}, refs, nil
}

// Condition is a parsed `when`: Left Op Right, where each side is a literal
// or a whole reference; a bare reference means "== true".
type Condition struct {
	Left, Right Binding
	// Op is one of "==", "!=", "<", "<=", ">", ">=" (the ordered ones
	// compare int or float values).
	Op string
}

// orderedOps are the operators that compare int or float values in
// order, longest first (so "<=" is not read as "<").
var orderedOps = []string{"<=", ">=", "<", ">"}

// IsOrdered reports whether op compares in order (<, <=, >, >=).
func IsOrdered(op string) bool { return slices.Contains(orderedOps, op) }

// ParseWhen parses a step's when: one condition, or several joined by
// "&&" that must all hold, each part holding a comparison operator or a
// reference. A when with a part holding neither is one condition (as
// "{{params.x}} == a && b" compares with the literal "a && b").
func ParseWhen(s string) ([]Condition, []ref, error) {
	parts := strings.Split(s, "&&")
	comparison := func(p string) bool { return strings.ContainsAny(p, "=<>") || strings.Contains(p, "{{") }
	if len(parts) > 1 && !slices.ContainsFunc(parts, func(p string) bool { return !comparison(p) }) {
		var conds []Condition
		var refs []ref
		for _, p := range parts {
			c, r, err := ParseCondition(p)
			if err != nil {
				return nil, nil, fmt.Errorf("invalid condition %q: %v", s, err)
			}
			conds, refs = append(conds, c), append(refs, r...)
		}
		return conds, refs, nil
	}
	c, r, err := ParseCondition(s)
	if err != nil {
		return nil, nil, err
	}
	return []Condition{c}, r, nil
}

// ParseCondition parses one comparison of a step's when.
func ParseCondition(s string) (Condition, []ref, error) {
	var c Condition
	var left, right string
	switch {
	case strings.Contains(s, "=="):
		left, right, _ = strings.Cut(s, "==")
		c.Op = "=="
	case strings.Contains(s, "!="):
		left, right, _ = strings.Cut(s, "!=")
		c.Op = "!="
	default:
		left, right, c.Op = s, "true", "=="
		for _, op := range orderedOps {
			if l, r, ok := strings.Cut(s, op); ok {
				left, right, c.Op = l, r, op
				break
			}
		}
	}
	var refs []ref
	for i, side := range []string{left, right} {
		side = strings.Trim(strings.TrimSpace(side), `'"`)
		b, r, err := parseBinding(side)
		if err != nil {
			return c, nil, fmt.Errorf("invalid condition %q: %v", s, err)
		}
		if it, ok := wholeItem(side); ok {
			b = Binding{Item: true, Field: it.field}
		}
		if !b.IsRef() && !b.Item && len(r) > 0 {
			return c, nil, fmt.Errorf("invalid condition %q: each side must be a whole reference or a literal", s)
		}
		if side == "" {
			return c, nil, fmt.Errorf("invalid condition %q: expected LEFT OP RIGHT with OP one of ==, !=, <, <=, >, >=", s)
		}
		refs = append(refs, r...)
		if i == 0 {
			c.Left = b
		} else {
			c.Right = b
		}
	}
	return c, refs, nil
}

// LiteralRef is one reference inside a literal: exactly one of Param,
// Item (with its Field path, "" for the whole item), Run and Step (with
// Output: an output parameter's value inside a step input's text) is set.
type LiteralRef struct {
	Param        string
	Item         bool
	Field        string
	Run          string
	Step, Output string
}

// LiteralParts splits a literal (a step input value or env value that is
// not a whole reference) into its text and its references ({{params.NAME}},
// {{item}}, {{item.FIELD}}, {{run.FIELD}}, {{steps.STEP.outputs.OUTPUT}}),
// in order: texts has one element more than refs.
func LiteralParts(s string) (texts []string, refs []LiteralRef, err error) {
	texts, all, err := parseRefs(s)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range all {
		refs = append(refs, LiteralRef{Param: r.param, Item: r.item, Field: r.field, Run: r.run, Step: r.step, Output: r.output})
	}
	return texts, refs, nil
}

// ValueType returns the parameter type of a whole reference's value: the
// parameter's or the step output's type; "" for a literal or an unknown
// reference.
func (pl *Pipeline) ValueType(b Binding) string {
	switch {
	case b.Param != "":
		return pl.Params[b.Param].Type
	case b.Step != "":
		if s := pl.Step(b.Step); s != nil && s.Resolved != nil {
			if out, ok := s.Resolved.Output(b.Output); ok {
				return out.Type
			}
		}
	}
	return ""
}

// CompareType returns the type a condition compares its sides as: the
// type of its typed side (a reference), float when an int meets a float,
// and string (trimmed text) when the sides' types differ otherwise or
// neither side is typed.
func (pl *Pipeline) CompareType(c Condition) string {
	l, r := pl.ValueType(c.Left), pl.ValueType(c.Right)
	switch {
	case l == r:
	case l == "":
		l = r
	case r == "":
	case (l == components.TypeInt || l == components.TypeFloat) && (r == components.TypeInt || r == components.TypeFloat):
		l = components.TypeFloat
	default:
		l = components.TypeString
	}
	if l == "" || !components.IsParam(l) {
		return components.TypeString
	}
	return l
}
