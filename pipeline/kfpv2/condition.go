package kfpv2

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

var conditionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(!\()?\s*(?:(int|double|bool)\()?inputs\.parameter_values\['([^']+)'\]\)?\s*(==|!=|<=|>=|<|>)\s*('[^']*'|-?[0-9][0-9.]*|true|false|(?:(?:int|double|bool)\()?inputs\.parameter_values\['([^']+)'\]\)?)\s*(\))?$`)
})

// negated are the operators of the negation of a comparison.
var negated = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

// condition is the when of a task's triggerPolicy.condition: KFP writes a
// CEL expression; pipectl runs comparisons of a task input with a literal
// or another task input (==, !=, <, <=, >, >=; dsl.If(x == 'heads'),
// dsl.If(x > 5) under int() or double()), each possibly negated as
// !(...) (dsl.Else), joined by && (dsl.Elif: the earlier branches'
// negations and its own).
func condition(cond string, inputs *yaml.Node) (string, error) {
	var parts []string
	for _, part := range strings.Split(cond, "&&") {
		p, err := comparison(cond, part, inputs)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " && "), nil
}

// comparison is one comparison of condition cond.
func comparison(cond, part string, inputs *yaml.Node) (string, error) {
	m := conditionRE().FindStringSubmatch(strings.TrimSpace(part))
	if m == nil || (m[1] != "") != (m[7] != "") {
		return "", fmt.Errorf("condition %q is not supported yet: pipectl runs comparisons (==, !=, <, <=, >, >=) of a task input with a literal or another task input, each possibly negated as !(...), joined by &&", cond)
	}
	input := func(name string) (string, error) {
		v, _, ok := yamlfile.Lookup(inputs, name)
		if inputs == nil || !ok || v.Kind != yaml.ScalarNode || !strings.HasPrefix(v.Value, "{{") {
			return "", fmt.Errorf("condition %q: the task has no input parameter %q given by a pipeline input or a task output", cond, name)
		}
		return v.Value, nil
	}
	left, err := input(m[3])
	if err != nil {
		return "", err
	}
	op := m[4]
	if m[1] != "" {
		op = negated[op]
	}
	if m[6] != "" {
		right, err := input(m[6])
		if err != nil {
			return "", err
		}
		return left + " " + op + " " + right, nil
	}
	lit := strings.Trim(m[5], "'")
	if strings.ContainsAny(lit, "=!{}<>&\\\"") {
		return "", fmt.Errorf("condition %q: the literal %s is not supported", cond, m[5])
	}
	return left + " " + op + " " + lit, nil
}
