package components

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestCheckValue(t *testing.T) {
	tests := []struct{ typ, in, err string }{
		{TypeString, "{{x}}", ""},
		{TypeInt, " 42", ""},
		{TypeInt, "-007", ""},
		{TypeInt, "+12345678901234567890123", ""},
		{TypeInt, "4.2", "expected a whole number"},
		{TypeInt, "0x1F", "expected a whole number"},
		{TypeInt, "1_000", "expected a whole number"},
		{TypeInt, "", "expected a whole number"},
		{TypeFloat, "1.0", ""},
		{TypeFloat, "1e-2", ""},
		{TypeFloat, ".5", ""},
		{TypeFloat, "-3.", ""},
		{TypeFloat, "7", ""},
		{TypeFloat, "NaN", "expected a finite decimal number"},
		{TypeFloat, "inf", "expected a finite decimal number"},
		{TypeFloat, "1e400", "expected a finite decimal number"},
		{TypeFloat, "0x1p-2", "expected a finite decimal number"},
		{TypeBool, "True", ""},
		{TypeBool, "FALSE", ""},
		{TypeBool, " 1\n", ""},
		{TypeBool, "yes", "expected true or false"},
		{TypeJSON, `{"b": 1,  "a": [true]}`, ""},
		{TypeJSON, `12345678901234567890`, ""},
		{TypeJSON, `{`, "expected JSON"},
		{TypeJSON, ``, "expected JSON"},
		{TypeJSON, `{"a": 1} x`, "expected JSON"},
		{TypeDataset, "x", "takes no literal value"},
		// Valid JSON, deeper than encoding/json reads: said so.
		{TypeJSON, strings.Repeat("[", 60000) + strings.Repeat("]", 60000), "expected JSON (json) nested at most 10000 deep, got a value nested 60000 deep"},
		{TypeJSON, strings.Repeat("[", 10000) + strings.Repeat("]", 10000), ""},
		{TypeJSON, `["[[[[", {"a": "\"]]"}]`, ""},
	}
	for _, tt := range tests {
		err := CheckValue(tt.typ, tt.in)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("CheckValue(%s, %q) = %v, want %q", tt.typ, tt.in, err, tt.err)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ typ, in, want string }{
		{TypeInt, " +007", "7"},
		{TypeInt, "-0", "0"},
		{TypeInt, "12345678901234567890", "12345678901234567890"},
		{TypeFloat, "1.0", "1"},
		{TypeFloat, "1e-2", "0.01"},
		{TypeBool, "True", "true"},
		{TypeBool, "0", "false"},
		{TypeJSON, `{"b": 1,  "a": [true, 1.0]}`, `{"a":[true,1],"b":1}`},
		{TypeString, " x\n", "x"},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.typ, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Canonical(%s, %q) = %q, %v; want %q", tt.typ, tt.in, got, err, tt.want)
		}
	}
	if _, err := Canonical(TypeInt, "many"); err == nil {
		t.Error("Canonical accepted an int that is not one")
	}
}

// TestNodeValueAsWritten: every literal reaches the program as written;
// json written as YAML becomes JSON text keeping key order and each
// scalar's text.
func TestNodeValueAsWritten(t *testing.T) {
	tests := []struct {
		name, typ, yaml, want string
	}{
		{"float keeps .0", TypeFloat, `1.0`, `1.0`},
		{"float exponent", TypeFloat, `1e-3`, `1e-3`},
		{"int big", TypeInt, `12345678901234567890`, `12345678901234567890`},
		{"int leading zero", TypeInt, `007`, `007`},
		{"bool True", TypeBool, `True`, `True`},
		{"bool quoted", TypeBool, `'True'`, `True`},
		{"string number", TypeString, `1.50`, `1.50`},
		{"string multiline", TypeString, "|\n  a\n  b\n", "a\nb\n"},
		{"json string as is", TypeJSON, `'{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}'`,
			`{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`},
		{"json flow mapping", TypeJSON, `{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`,
			`{"replicas":2,"x":1.0,"big":12345678901234567890,"a":[3,1]}`},
		{"json block mapping", TypeJSON, "z: 1\ny:\n  - 1.50\n  - -0\nx: hello\n", `{"z":1,"y":[1.50,-0],"x":"hello"}`},
		{"json scalars", TypeJSON, `[True, ~, null, "1", 1e5, yes, 2001-12-14, "<&>", "é\n"]`,
			`[true,null,null,"1",1e5,"yes","2001-12-14","<&>","é\n"]`},
		{"json keys are strings", TypeJSON, `{1: a, true: b, "q": c}`, `{"1":"a","true":"b","q":"c"}`},
		{"json aliases expand", TypeJSON, "a: &x [1, 2.0]\nb: *x\n", `{"a":[1,2.0],"b":[1,2.0]}`},
		{"json scalar", TypeJSON, `3.10`, `3.10`},
		{"json empty", TypeJSON, `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.yaml), &doc); err != nil {
				t.Fatal(err)
			}
			got, err := NodeValue(tt.typ, doc.Content[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NodeValue(%s, %s) (-want +got):\n%s", tt.typ, tt.yaml, diff)
			}
		})
	}
}

func TestNodeValueErrors(t *testing.T) {
	tests := []struct {
		name, typ, yaml, want string
	}{
		{"int as float text", TypeInt, `2.0`, `expected a whole number (int), got "2.0"`},
		{"int hex", TypeInt, `0x1F`, `expected a whole number (int), got "0x1F"`},
		{"float nan", TypeFloat, `.nan`, `expected a finite decimal number (float), got ".nan"`},
		{"bool yes", TypeBool, `yes`, `expected true or false (bool), got "yes"`},
		{"list for int", TypeInt, `[1]`, `expected a single int value, got a list`},
		{"json bad string", TypeJSON, `'{"a": }'`, `expected JSON (json), got "{\"a\": }"`},
		{"json hex number", TypeJSON, "a: 1\nb: 0x1F\n", `line 2 column 4: "0x1F" is not a JSON number`},
		{"json inf", TypeJSON, `[.inf]`, `line 1 column 2: ".inf" is not a JSON number`},
		{"json plus sign", TypeJSON, `{a: +1}`, `line 1 column 5: "+1" is not a JSON number`},
		{"json duplicate key", TypeJSON, `{a: 1, a: 2}`, `line 1 column 8: duplicate key "a"`},
		{"json list key", TypeJSON, "? [a]\n: 1\n", `line 1 column 3: a json object key must be a single value`},
		{"json merge key", TypeJSON, "a: &m {x: 1}\nb: {<<: *m}\n", `line 2 column 5: a json object key must be a single value`},
		{"json binary", TypeJSON, `[!!binary aGk=]`, `line 1 column 2: a value tagged !!binary has no JSON form`},
		{"json custom tag", TypeJSON, `!thing x`, `a value tagged !thing has no JSON form`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.yaml), &doc); err != nil {
				t.Fatal(err)
			}
			_, err := NodeValue(tt.typ, doc.Content[0])
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NodeValue(%s, %s) = %v, want an error with %q", tt.typ, tt.yaml, err, tt.want)
			}
		})
	}
}

// TestNodeValueBoundsAliases: aliases cannot blow a json value up without limit.
func TestNodeValueBoundsAliases(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 9; i++ {
		name := string(rune('b' + i))
		src += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	_, err := NodeValue(TypeJSON, doc.Content[0])
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v, want the size bound", err)
	}
}

func TestIsNull(t *testing.T) {
	for src, want := range map[string]bool{"a: null": true, "a: ~": true, "a:": true, "a: Null": true, "a: 'null'": false, "a: ''": false, "a: 0": false} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		if got := IsNull(doc.Content[0].Content[1]); got != want {
			t.Errorf("IsNull(%s) = %v, want %v", src, got, want)
		}
	}
}

// FuzzNodeValue: any YAML value of any parameter type gives text or an
// error, never a panic; json text is valid JSON, and text of other types
// passes CheckValue and is the scalar as written.
func FuzzNodeValue(f *testing.F) {
	for _, s := range []string{`1.0`, `'True'`, `{"a": [1, 2.0], "b": 12345678901234567890}`, "a: &x [1]\nb: *x\n", `[yes, ~, 2001-12-14]`, `0x1F`, `{<<: {a: 1}}`, `!!binary aGk=`, "|\n  {\"a\": 1}\n", `? [a]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		n := doc.Content[0]
		for _, typ := range ParamTypes {
			got, err := NodeValue(typ, n)
			if err != nil {
				continue
			}
			if typ == TypeJSON && !json.Valid([]byte(got)) {
				t.Fatalf("NodeValue(json, %q) = %q: not JSON", src, got)
			}
			if err := CheckValue(typ, got); err != nil {
				t.Fatalf("NodeValue(%s, %q) = %q fails CheckValue: %v", typ, src, got, err)
			}
			if typ != TypeJSON && (n.Kind != yaml.ScalarNode || got != n.Value) {
				t.Fatalf("NodeValue(%s, %q) = %q, not the scalar as written", typ, src, got)
			}
			if _, err := Canonical(typ, got); err != nil {
				t.Fatalf("Canonical(%s, %q): %v", typ, got, err)
			}
		}
	})
}

// TestNodeValueAliasCycle: an alias to a list or mapping that holds it
// would never end as JSON: an error naming it, not a crash.
func TestNodeValueAliasCycle(t *testing.T) {
	for _, src := range []string{"a: &x [*x]", "&m {b: *m}", "&x [1, [2, *x]]"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		n := doc.Content[0]
		if n.Kind == yaml.MappingNode && src[0] == 'a' {
			n = n.Content[1]
		}
		if got, err := NodeValue(TypeJSON, n); err == nil || !strings.Contains(err.Error(), "refers to a value that holds it") {
			t.Errorf("NodeValue(json, %q) = %q, %v; want the cycle named", src, got, err)
		}
	}
	// An alias used twice, not inside itself, is fine.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("[&x [1], *x]"), &doc); err != nil {
		t.Fatal(err)
	}
	if got, err := NodeValue(TypeJSON, doc.Content[0]); err != nil || got != "[[1],[1]]" {
		t.Errorf("NodeValue(json, [&x [1], *x]) = %q, %v; want [[1],[1]]", got, err)
	}
}
