package kfpv2

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestCondition: the CEL conditions KFP writes for dsl.If, dsl.Elif and
// dsl.Else that are comparisons (possibly negated, joined by &&) become a
// step's when; others are refused, naming the condition.
func TestCondition(t *testing.T) {
	var inputs yaml.Node
	if err := yaml.Unmarshal([]byte(`{a: "{{steps.flip.outputs.Output}}", b: "{{params.b}}", c: "x"}`), &inputs); err != nil {
		t.Fatal(err)
	}
	in := inputs.Content[0]
	for _, tc := range []struct{ cond, want, err string }{
		{cond: "inputs.parameter_values['a'] == 'heads'", want: "{{steps.flip.outputs.Output}} == heads"},
		{cond: "!(inputs.parameter_values['a'] == 'heads')", want: "{{steps.flip.outputs.Output}} != heads"},
		{cond: "int(inputs.parameter_values['b']) != 3", want: "{{params.b}} != 3"},
		{cond: "inputs.parameter_values['a'] == inputs.parameter_values['b']", want: "{{steps.flip.outputs.Output}} == {{params.b}}"},
		{cond: "!(int(inputs.parameter_values['a']) == int(inputs.parameter_values['b']))", want: "{{steps.flip.outputs.Output}} != {{params.b}}"},
		{cond: "inputs.parameter_values['a'] == inputs.parameter_values['c']", err: `the task has no input parameter "c" given by a pipeline input or a task output`},
		{cond: "int(inputs.parameter_values['a']) > 5", want: "{{steps.flip.outputs.Output}} > 5"},
		{cond: "!(int(inputs.parameter_values['a']) <= 5)", want: "{{steps.flip.outputs.Output}} > 5"},
		{cond: "double(inputs.parameter_values['a']) >= double(inputs.parameter_values['b'])", want: "{{steps.flip.outputs.Output}} >= {{params.b}}"},
		{cond: "!(inputs.parameter_values['a'] == 'heads') && inputs.parameter_values['b'] == 'tails'", want: "{{steps.flip.outputs.Output}} != heads && {{params.b}} == tails"},
		{cond: "inputs.parameter_values['a'] == 'x' || inputs.parameter_values['b'] == 'y'", err: "is not supported yet"},
		{cond: "inputs.parameter_values['a'] == 'x<y'", err: "the literal 'x<y' is not supported"},
		{cond: "inputs.parameter_values['a'] in ['x', 'y']", err: "is not supported yet"},
		{cond: "!(inputs.parameter_values['a'] == 'x'", err: "is not supported yet"},
	} {
		got, err := condition(tc.cond, in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.cond, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.cond, got, err, tc.want)
		}
	}
}
