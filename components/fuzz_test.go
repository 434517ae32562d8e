package components

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/yamlfile"
)

// FuzzDecode: any bytes given as a component file, in pipectl's format or
// KFP v1's, load or give errors that are each a *yamlfile.Error naming the
// file and a line; a loaded component resolves its argv and env without a
// panic, and values holding placeholder syntax are not parsed again.
func FuzzDecode(f *testing.F) {
	componentstest.AddFiles(f, "testdata/*.yaml", "../pipeline/testdata/components/*.yaml", "../examples/attrition/components/*/component.yaml")
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
		c, err := Decode(yf, yf.Root, "")
		if err != nil {
			checkSpecErrors(t, err, path)
			return
		}
		plain, braced := placeholderValues(c, "1"), placeholderValues(c, "{{inputs.x}}$(X)")
		_, plainErr := mustProgram(t, c).Argv(plain)
		argv, err := mustProgram(t, c).Argv(braced)
		if (plainErr == nil) != (err == nil) && !strings.Contains(fmt.Sprint(err), "expected a truth value") {
			t.Fatalf("Argv: %v with plain values, %v with values holding {{...}}", plainErr, err)
		}
		if written := append(append([]string{}, c.Command...), c.Args...); err == nil && !strings.Contains(strings.Join(written, ""), "{{") && !slices.Equal(argv, written) {
			t.Fatalf("argv %q of %q: text without placeholders changed", argv, written)
		}
		_, plainErr = mustProgram(t, c).Environ(plain)
		_, err = mustProgram(t, c).Environ(braced)
		if (plainErr == nil) != (err == nil) {
			t.Fatalf("Environ: %v with plain values, %v with values holding {{...}}", plainErr, err)
		}
	})
}

// placeholderValues gives every input and output of c a value built from val.
func placeholderValues(c *Component, val string) Placeholders {
	v := Placeholders{
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

// FuzzExpand: placeholder text expands without a panic, and a value reaches
// the program byte for byte: the text around a placeholder is kept as
// written and the value is never parsed again.
func FuzzExpand(f *testing.F) {
	for _, s := range [][3]string{
		{"--epochs=", "", "3"},
		{"", "/x", "{{inputs.x}}"},
		{"a}}b", "}}", "$(HOME) {{ }}"},
		{"{", "}", "\x00\xff"},
		{"{{if inputs.x}}", "", "y"},
		{"{{run.id}}/", "{{outputs.o.path}}", "v"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, before, after, val string) {
		v := Placeholders{
			Params: map[string]string{"x": val}, InputPaths: map[string]string{"x": val},
			OutputPaths: map[string]string{"o": val}, Run: val, Step: val, Pod: val,
		}
		// Any text: no panic.
		for _, s := range []string{before, after, before + after} {
			if out, ok, err := Expand(s, v); err == nil && ok && !strings.Contains(s, "{{") && out != s {
				t.Fatalf("Expand(%q) = %q: text without placeholders changed", s, out)
			}
			_, _ = ParseBoolWord(s)
		}
		// A placeholder between literal text.
		if strings.Contains(before, "{{") || strings.Contains(after, "{{") || strings.HasSuffix(before, "{") {
			return
		}
		s := before + "{{inputs.x}}" + after
		out, ok, err := Expand(s, v)
		if err != nil || !ok {
			t.Fatalf("Expand(%q) = %v, %v", s, ok, err)
		}
		if want := before + val + after; out != want {
			t.Fatalf("Expand(%q) with x=%q = %q, want %q", s, val, out, want)
		}
	})
}

// FuzzCheckValue: a value that passes its type's check has a canonical
// form, which passes too, is its own canonical form and equals the value;
// every value survives the workflow encoding byte for byte.
func FuzzCheckValue(f *testing.F) {
	for _, s := range []string{"1", "-0", "1e3", "0x1F", "1_000", " 2", "true", "Yes", "NaN", "-Inf", "1.5", `{"a": [1, 2.0]}`, `"s"`, "12345678901234567890", "pipectl-b64:e3t9", "{{x}}", "$(HOME)", "\xff"} {
		f.Add(s)
	}
	// Valid JSON deeper than encoding/json reads (issue 21).
	f.Add(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	f.Add(`["\\"` + strings.Repeat("[", 10001) + `"` + strings.Repeat("]", 10001) + "]")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > componentstest.MaxFuzzInput {
			return
		}
		for _, typ := range ParamTypes {
			if CheckValue(typ, s) != nil {
				continue
			}
			c, err := Canonical(typ, s)
			if err != nil {
				t.Fatalf("Canonical(%s, %q): %v (CheckValue passed)", typ, s, err)
			}
			if err := CheckValue(typ, c); err != nil {
				t.Fatalf("CheckValue(%s, %q) (canonical of %q): %v", typ, c, s, err)
			}
			if c2, err := Canonical(typ, c); err != nil || c2 != c {
				t.Fatalf("Canonical(%s, %q) = %q, %v: not its own canonical form", typ, c, c2, err)
			}
			if !Equal(typ, s, c) {
				t.Fatalf("Equal(%s, %q, %q) is false for a value and its canonical form", typ, s, c)
			}
		}
		enc := EncodeValue(s)
		if strings.Contains(enc, "{{") || strings.Contains(enc, "$") {
			t.Fatalf("EncodeValue(%q) = %q: holds {{ or $", s, enc)
		}
		if got, err := DecodeValue(enc); err != nil || got != s {
			t.Fatalf("DecodeValue(EncodeValue(%q)) = %q, %v", s, got, err)
		}
		if got, err := DecodeValue(s); err == nil && !strings.HasPrefix(s, ExecValuePrefix) && got != s {
			t.Fatalf("DecodeValue(%q) = %q: plain text changed", s, got)
		}
	})
}
