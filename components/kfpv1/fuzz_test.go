package kfpv1

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/yamlfile"
)

// FuzzDecode: any bytes given as a component file, in pipectl's format or
// KFP v1's, load or give errors that are each a *yamlfile.Error naming the
// file and a line; a loaded component resolves its argv and env without a
// panic, and values holding placeholder syntax are not parsed again.
func FuzzDecode(f *testing.F) {
	componentstest.AddFiles(f, "../testdata/*.yaml", "../../pipeline/testdata/components/*.yaml", "../../examples/attrition/components/*/component.yaml")
	for _, s := range []string{
		"name: k\ninputs: [{name: x, type: Integer, optional: true}]\noutputs: [{name: o}]\nimplementation:\n  container:\n    image: a\n    command: [sh, -c, {concat: [echo, {inputValue: x}]}, {outputPath: o}]\n    args: [{if: {cond: {isPresent: x}, then: [--x, {inputValue: x}], else: [--none]}}]\n    env: {A: b}\n    fileOutputs: {o: /tmp/o}\n",
		"name: g\nimplementation:\n  graph: {tasks: {}}\n",
		"apiVersion: pipectl.dev/v1alpha1\nkind: Component\nmetadata: {name: c}\ninputs: [{name: x, type: bool, optional: true}]\ncommand: [a, '{{if present inputs.x}}', '{{if inputs.x}}', y, '{{else}}', n, '{{end}}', '{{end}}']\nenv: [{name: E, value: '{{inputs.x}}-{{run.id}}'}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > componentstest.MaxFuzzInput {
			return
		}
		const path = "c.yaml"
		yf, err := yamlfile.Parse(path, data)
		if err != nil {
			checkSpecErrors(t, err, path)
			return
		}
		c, _, err := Decode(yf, yf.Root, "")
		if err != nil {
			checkSpecErrors(t, err, path)
			return
		}
		prog, err := c.Program()
		if err != nil {
			t.Fatalf("a loaded component: %v", err)
		}
		plain, braced := placeholderValues(c, "1"), placeholderValues(c, "{{inputs.x}}$(X)")
		_, plainErr := prog.Argv(plain)
		argv, err := prog.Argv(braced)
		if (plainErr == nil) != (err == nil) && !strings.Contains(fmt.Sprint(err), "expected a truth value") {
			t.Fatalf("Argv: %v with plain values, %v with values holding {{...}}", plainErr, err)
		}
		if written := append(append([]string{}, c.Command...), c.Args...); err == nil && !strings.Contains(strings.Join(written, ""), "{{") && !slices.Equal(argv, written) {
			t.Fatalf("argv %q of %q: text without placeholders changed", argv, written)
		}
		_, plainErr = prog.Environ(plain)
		_, err = prog.Environ(braced)
		if (plainErr == nil) != (err == nil) {
			t.Fatalf("Environ: %v with plain values, %v with values holding {{...}}", plainErr, err)
		}
	})
}

// placeholderValues gives every input and output of c a value built from val.
func placeholderValues(c *components.Component, val string) components.Placeholders {
	v := components.Placeholders{
		Params: map[string]string{}, InputPaths: map[string]string{}, InputURIs: map[string]string{},
		OutputPaths: map[string]string{}, OutputURIs: map[string]string{},
		Run: "r" + val, Step: "s" + val, Pod: "p" + val,
	}
	for _, in := range c.Inputs {
		v.Params[in.Name] = val
		v.InputPaths[in.Name] = "/in/" + in.Name + val
		v.InputURIs[in.Name] = "file:///in/" + in.Name + val
	}
	for _, out := range c.Outputs {
		v.OutputPaths[out.Name] = "/out/" + out.Name + val
		v.OutputURIs[out.Name] = "file:///out/" + out.Name + val
	}
	return v
}

// checkSpecErrors fails t unless each of err's errors is a *yamlfile.Error
// naming file path, a line and a column.
func checkSpecErrors(t *testing.T, err error, path string) {
	t.Helper()
	for _, e := range yamlfile.Split(err) {
		var ye *yamlfile.Error
		if !errors.As(e, &ye) {
			t.Fatalf("error is %T, want *yamlfile.Error: %v", e, e)
		}
		if ye.File != path || ye.Line < 1 || ye.Column < 1 || ye.Msg == "" {
			t.Fatalf("error %q does not name %s, a line and a column", ye, path)
		}
	}
}
