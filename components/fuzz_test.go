package components

import (
	"strings"
	"testing"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/wire"
)

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
		enc := wire.EncodeValue(s)
		if strings.Contains(enc, "{{") || strings.Contains(enc, "$") {
			t.Fatalf("EncodeValue(%q) = %q: holds {{ or $", s, enc)
		}
		if got, err := wire.DecodeValue(enc); err != nil || got != s {
			t.Fatalf("DecodeValue(wire.EncodeValue(%q)) = %q, %v", s, got, err)
		}
		if got, err := wire.DecodeValue(s); err == nil && !strings.HasPrefix(s, wire.ExecValuePrefix) && got != s {
			t.Fatalf("DecodeValue(%q) = %q: plain text changed", s, got)
		}
	})
}
