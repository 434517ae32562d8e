package argo

import (
	"encoding/base64"
	"fmt"
	"regexp"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// plainLiteral matches the literals written as they are in a when expression.
var plainLiteral = regexp.MustCompile(`^[A-Za-z0-9 _.:/+-]*$`)

// when compiles a step's condition to an Argo when: an expression tag whose
// operands are variables (never user text spliced into the expression),
// decoded from the value encoding, trimmed and brought to the canonical
// form of the type the sides are compared as (pipeline.CompareType), as
// components.Equal does for a local run.
func (c *compiler) when(s string) (string, error) {
	cond, _, err := pipeline.ParseCondition(s)
	if err != nil {
		return "", err
	}
	t := c.p.CompareType(cond)
	left, err := c.operand(cond.Left, t)
	if err != nil {
		return "", err
	}
	right, err := c.operand(cond.Right, t)
	if err != nil {
		return "", err
	}
	return "{{=" + left + " " + cond.Op + " " + right + "}}", nil
}

// operand is the expression of one side of a condition compared as type t.
func (c *compiler) operand(b pipeline.Binding, t string) (string, error) {
	switch {
	case b.Param != "":
		if _, ok := c.p.Params[b.Param]; !ok {
			return "", fmt.Errorf("unknown parameter %q", b.Param)
		}
		return canonical(t, decoded("workflow.parameters['"+b.Param+"']")), nil
	case b.Step != "":
		up := c.p.Step(b.Step)
		if up == nil || up.Resolved == nil {
			return "", fmt.Errorf("unknown step %q", b.Step)
		}
		out, ok := up.Resolved.Output(b.Output)
		if !ok {
			return "", fmt.Errorf("step %s has no output %q", b.Step, b.Output)
		}
		if components.IsArtifact(out.Type) {
			return "", fmt.Errorf("output %q of step %s is an artifact (%s): a condition can only use parameters", b.Output, b.Step, out.Type)
		}
		return canonical(t, decoded("tasks['"+c.tasks[b.Step]+"'].outputs.parameters['"+b.Output+"']")), nil
	default:
		lit, err := components.Canonical(t, b.Literal)
		if err != nil {
			return "", fmt.Errorf("literal %q: %v", b.Literal, err)
		}
		switch {
		case t == components.TypeBool:
			return lit, nil // true or false
		case t == components.TypeInt:
			return "'" + lit + "'", nil // canonical already
		case plainLiteral.MatchString(lit):
			return canonical(t, "'"+lit+"'"), nil
		}
		return canonical(t, "sprig.b64dec('"+base64.StdEncoding.EncodeToString([]byte(lit))+"')"), nil
	}
}

// decoded is the expression of the trimmed, decoded value of variable v.
func decoded(v string) string {
	return fmt.Sprintf("trim(hasPrefix(%s, '%s') ? sprig.b64dec(%s[%d:]) : %s)", v, components.ExecValuePrefix, v, len(components.ExecValuePrefix), v)
}

// canonical is the expression of the canonical form (components.Canonical)
// of the trimmed text x as a value of type t, to compare with ==: a bool,
// an int's digits without sign or leading zeros, a float64, JSON
// re-encoded with sorted keys, or the text itself.
func canonical(t, x string) string {
	switch t {
	case components.TypeBool:
		return "(" + x + " in ['1', 't', 'T', 'TRUE', 'true', 'True'])"
	case components.TypeInt:
		return "sprig.regexReplaceAll('^-0$', sprig.regexReplaceAll('^(?:[+]|(-))?0*([0-9])', " + x + ", '$1$2'), '0')"
	case components.TypeFloat:
		return "float(" + x + ")"
	case components.TypeJSON:
		return "toJSON(fromJSON(" + x + "))"
	}
	return x
}
