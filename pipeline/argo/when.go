package argo

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/plan"
)

// plainLiteral matches the literals written as they are in a when expression.
var plainLiteral = regexp.MustCompile(`^[A-Za-z0-9 _.:/+-]*$`)

// when compiles a step's condition to an Argo when: an expression tag whose
// operands are variables (never user text spliced into the expression),
// decoded from the value encoding, trimmed and brought to the canonical
// form of the type the sides are compared as (plan.Condition.Type), as
// components.Equal does for a local run.
//
// An ordered comparison (<, <=, >, >=) of ints compares int() of the
// canonical digits (a 64-bit integer, as plan.Condition.Eval reads it);
// of floats, their float(). The comparisons of a when written A && B are
// joined with &&.
func (c *compiler) when(cond *plan.Condition) (string, error) {
	var parts []string
	for _, cmp := range append([]plan.Condition{*cond}, cond.And...) {
		left, err := c.operand(cmp.Left, cmp.Type)
		if err != nil {
			return "", err
		}
		right, err := c.operand(cmp.Right, cmp.Type)
		if err != nil {
			return "", err
		}
		if cmp.Op != plan.OpEqual && cmp.Op != plan.OpNotEqual && cmp.Type == components.TypeInt {
			left, right = "int("+left+")", "int("+right+")"
		}
		parts = append(parts, left+" "+cmp.Op+" "+right)
	}
	if len(parts) == 1 {
		return "{{=" + parts[0] + "}}", nil
	}
	return "{{=(" + strings.Join(parts, ") && (") + ")}}", nil
}

// operand is the expression of one side of a condition compared as type t.
func (c *compiler) operand(o plan.Operand, t string) (string, error) {
	switch {
	case o.Param != "":
		return canonical(t, decoded("workflow.parameters['"+o.Param+"']")), nil
	case o.Output != nil:
		return canonical(t, decoded("tasks['"+c.tasks[o.Output.Step]+"'].outputs.parameters['"+o.Output.Output+"']")), nil
	default:
		lit, err := components.Canonical(t, o.Lit)
		if err != nil {
			return "", fmt.Errorf("literal %q: %v", o.Lit, err)
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
	return fmt.Sprintf("trim(hasPrefix(%s, '%s') ? sprig.b64dec(%s[%d:]) : %s)", v, wire.ExecValuePrefix, v, len(wire.ExecValuePrefix), v)
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
