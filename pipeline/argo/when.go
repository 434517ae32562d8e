package argo

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// plainLiteral matches the literals written as they are in a when expression.
var plainLiteral = regexp.MustCompile(`^[A-Za-z0-9 _.:/+-]*$`)

// when compiles a step's condition to an Argo when: an expression tag whose
// operands are variables (never user text spliced into the expression),
// decoded from the value encoding and trimmed, compared as strings.
func (c *compiler) when(s string) (string, error) {
	cond, _, err := pipeline.ParseCondition(s)
	if err != nil {
		return "", err
	}
	left, err := c.operand(cond.Left)
	if err != nil {
		return "", err
	}
	right, err := c.operand(cond.Right)
	if err != nil {
		return "", err
	}
	return "{{=" + left + " " + cond.Op + " " + right + "}}", nil
}

func (c *compiler) operand(b pipeline.Binding) (string, error) {
	switch {
	case b.Param != "":
		if _, ok := c.p.Params[b.Param]; !ok {
			return "", fmt.Errorf("unknown parameter %q", b.Param)
		}
		return decoded("workflow.parameters['" + b.Param + "']"), nil
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
		return decoded("tasks['" + c.tasks[b.Step] + "'].outputs.parameters['" + b.Output + "']"), nil
	default:
		lit := strings.TrimSpace(b.Literal)
		if plainLiteral.MatchString(lit) {
			return "'" + lit + "'", nil
		}
		return "sprig.b64dec('" + base64.StdEncoding.EncodeToString([]byte(lit)) + "')", nil
	}
}

// decoded is the expression of the trimmed, decoded value of variable v.
func decoded(v string) string {
	return fmt.Sprintf("trim(hasPrefix(%s, '%s') ? sprig.b64dec(%s[%d:]) : %s)", v, components.ExecValuePrefix, v, len(components.ExecValuePrefix), v)
}
