package pipeline

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/yamlfile"
)

// FuzzParse: any bytes given as a pipeline file load or give errors that
// are each a *yamlfile.Error naming a file, a line and a column; a loaded
// pipeline resolves its parameters to values that check against their
// types (an artifact param's default to a store's URI). The file sits in testdata, so the seeds' component paths resolve.
func FuzzParse(f *testing.F) {
	componentstest.AddFiles(f, "testdata/*.yaml", "testdata/invalid/*.yaml", "testdata/loops/*.yaml", "testdata/nested/*.yaml", "testdata/kfpgraph/*.yaml", "testdata/kfpv2/*.yaml", "../examples/attrition/pipeline.yaml")
	path := filepath.Join("testdata", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > componentstest.MaxFuzzInput {
			return
		}
		pl, err := Parse(path, data)
		if err != nil {
			for _, e := range yamlfile.Split(err) {
				var ye *yamlfile.Error
				if !errors.As(e, &ye) {
					t.Fatalf("error is %T, want *yamlfile.Error: %v", e, e)
				}
				if ye.File == "" || ye.Line < 1 || ye.Column < 1 || ye.Msg == "" {
					t.Fatalf("error %q does not name a file, a line and a column", ye)
				}
			}
			return
		}
		params, err := pl.ResolveParams(nil)
		for name, val := range params {
			check := func(v string) error { return components.CheckValue(pl.Params[name].Type, v) }
			if components.IsArtifact(pl.Params[name].Type) {
				check = uris.CheckURI // a default URI
			}
			if err := check(val); err != nil {
				t.Fatalf("parameter %s resolves to %q: %v", name, val, err)
			}
		}
		if err == nil && len(params) != len(pl.Params) {
			t.Fatalf("ResolveParams gave %d of %d parameters and no error", len(params), len(pl.Params))
		}
		for _, s := range pl.Steps {
			for _, d := range pl.Deps(s.Name) {
				if pl.Step(d) == nil {
					t.Fatalf("step %s depends on %q, which is no step", s.Name, d)
				}
			}
		}
	})
}

// FuzzParseCondition: any `when` text parses or gives an error, without a
// panic; a parsed condition has both sides, and written back as
// LEFT OP RIGHT (literals quoted) it parses to itself.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{
		"{{params.flag}} == true", "{{params.flag}}", "{{params.mode}} != 'fast'", `{{params.j}} == '{"b": [1.0], "a": null}'`,
		"{{steps.a.outputs.b}} == {{nope}}", "{{ steps.a.outputs.b }} != \"x\"", "a == b == c", "== x", "{{params.a}}{{params.b}}", "{{params.x",
		"{{params.n}} > 5", "{{params.n}} <= '5'", "a < b <= c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > componentstest.MaxFuzzInput {
			return
		}
		c, refs, err := ParseCondition(s)
		if err != nil {
			return
		}
		if c.Op != "==" && c.Op != "!=" && !IsOrdered(c.Op) {
			t.Fatalf("ParseCondition(%q): op %q", s, c.Op)
		}
		if c.Left == (Binding{}) || c.Right == (Binding{}) {
			t.Fatalf("ParseCondition(%q) = %+v: a side is empty", s, c)
		}
		n := 0
		for _, b := range []Binding{c.Left, c.Right} {
			if b.IsRef() {
				n++
			}
		}
		if len(refs) != n {
			t.Fatalf("ParseCondition(%q) = %+v with %d references, want %d", s, c, len(refs), n)
		}
		if strings.ContainsAny(c.Left.Param+c.Left.Step+c.Left.Output+c.Right.Param+c.Right.Step+c.Right.Output, "{}") {
			return // no parameter, step or output has such a name: validation rejects it
		}
		side := func(b Binding) string {
			if b.IsRef() {
				return b.String()
			}
			return "'" + b.Literal + "'" // a literal keeps its spaces in quotes
		}
		again := side(c.Left) + " " + c.Op + " " + side(c.Right)
		c2, _, err := ParseCondition(again)
		if err != nil || c2 != c {
			t.Fatalf("ParseCondition(%q) = %+v; written back as %q it parses to %+v, %v", s, c, again, c2, err)
		}
	})
}

// FuzzLiteralParts: a literal splits into its text and references, one
// text more than references, each reference of exactly one kind; joined
// back it splits the same way.
func FuzzLiteralParts(f *testing.F) {
	for _, s := range []string{"run-{{params.tag}}", "{{ params.a }}{{params.b}}", "a}}b{{params.c}}", "{{steps.a.outputs.b}}", "n={{steps.a.b.outputs.c}}!", "{{params.x", "{{}}", "{{{params.x}}}", "{{item}}-{{ item.a.b }}", "{{run.status}}: {{run.failedSteps}}", "{{item.}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > componentstest.MaxFuzzInput {
			return
		}
		texts, refs, err := LiteralParts(s)
		if err != nil {
			return
		}
		if len(texts) != len(refs)+1 {
			t.Fatalf("LiteralParts(%q) = %q, %+v: want one text more than references", s, texts, refs)
		}
		var b strings.Builder
		for i, r := range refs {
			b.WriteString(texts[i])
			switch {
			case r.Param != "" && !r.Item && r.Run == "" && r.Step == "":
				b.WriteString("{{params." + r.Param + "}}")
			case r.Item && r.Param == "" && r.Run == "" && r.Step == "" && r.Field == "":
				b.WriteString("{{item}}")
			case r.Item && r.Param == "" && r.Run == "" && r.Step == "":
				b.WriteString("{{item." + r.Field + "}}")
			case r.Run != "" && r.Param == "" && !r.Item && r.Step == "":
				b.WriteString("{{run." + r.Run + "}}")
			case r.Step != "" && r.Output != "" && r.Param == "" && !r.Item && r.Run == "":
				b.WriteString("{{steps." + r.Step + ".outputs." + r.Output + "}}")
			default:
				t.Fatalf("LiteralParts(%q): reference %+v is not of exactly one kind", s, r)
			}
		}
		b.WriteString(texts[len(texts)-1])
		texts2, refs2, err := LiteralParts(b.String())
		if err != nil || !slices.Equal(texts, texts2) || !slices.Equal(refs, refs2) {
			t.Fatalf("LiteralParts(%q) = %q, %+v; joined back as %q it gives %q, %+v, %v", s, texts, refs, b.String(), texts2, refs2, err)
		}
	})
}

// FuzzOverride: a -p NAME=VALUE flag gives the parameter VALUE as written,
// byte for byte, when it checks against the parameter's type, and an error
// naming the flag otherwise.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"3", "007", " 2", "1e3", "True", "yes", "NaN", `{"a": [1, 2.0]}`, "a=b", "{{params.s}}", "$(HOME)", "\xff", ""} {
		f.Add(s)
	}
	var params strings.Builder
	for _, typ := range components.ParamTypes {
		params.WriteString("  " + typ + ": {type: " + typ + ", default: '1'}\n")
	}
	pl, err := Parse("override.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: override}
params:
`+params.String()+`steps:
  - name: s
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: s}
      command: [echo, hi]
`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, val string) {
		if len(val) > componentstest.MaxFuzzInput {
			return
		}
		for _, typ := range components.ParamTypes {
			flags, err := ParseOverrides([]string{typ + "=" + val})
			if err != nil || len(flags) != 1 || flags[typ] != val {
				t.Fatalf("ParseOverrides(%s=%q) = %q, %v", typ, val, flags, err)
			}
			got, err := pl.ResolveParams(flags)
			if checkErr := components.CheckValue(typ, val); checkErr != nil {
				if err == nil || !strings.Contains(err.Error(), "-p "+typ+":") {
					t.Fatalf("-p %s=%q fails its check (%v), but ResolveParams says %v", typ, val, checkErr, err)
				}
				continue
			}
			if err != nil || got[typ] != val {
				t.Fatalf("-p %s=%q resolves to %q, %v; want it as written", typ, val, got[typ], err)
			}
		}
	})
}
