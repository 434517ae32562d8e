package yamlfile

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDidYouMean(t *testing.T) {
	names := []string{"retries", "procsPerNode", "nodes", "timeout", "name"}
	for _, tc := range []struct{ name, want string }{
		{"retires", `: did you mean "retries"?`},
		{"procPerNode", `: did you mean "procsPerNode"?`},
		{"Timeout", `: did you mean "timeout"?`},
		{"node", `: did you mean "nodes"?`},
		{"xyz", ""},
		{"image", ""},
	} {
		if got := didYouMean(tc.name, names); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestUnquotedTemplate(t *testing.T) {
	for _, tc := range []struct {
		src, want string
		ok        bool
	}{
		{"v: {{params.rows}}", "{{params.rows}}", true},
		{"v: {{ steps.a.outputs.b }}", "{{steps.a.outputs.b}}", true},
		{`v: "{{params.rows}}"`, "", false},
		{"v: {a: 1}", "", false},
		{"v: {{a: 1}: 2}", "", false},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tc.src), &doc); err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got, ok := UnquotedTemplate(doc.Content[0].Content[1])
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.src, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTabHint(t *testing.T) {
	_, err := Parse("p.yaml", []byte("kind: Pipeline\nmetadata:\n\tname: x\n"))
	if err == nil || err.Error() != "p.yaml:3:1: invalid YAML: found character that cannot start any token (line 3 is indented with a tab: YAML indents with spaces only)" {
		t.Errorf("got %v", err)
	}
}

// TestIndentHint: an indentation error is reported at the line that
// breaks the block, not the block's first line (where yaml.v3 puts it),
// with what is wrong with its indentation.
func TestIndentHint(t *testing.T) {
	head := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - name: a\n    component: c.yaml\n"
	for _, tc := range []struct{ name, src, want string }{
		{"list item", head + "   - name: b\n    component: c.yaml\n",
			"p.yaml:7:4: invalid YAML: did not find expected '-' indicator (line 7 is indented by 3 spaces, unlike any line above it (0, 2, 4 spaces): YAML nests by indentation, so a field must line up with the fields beside it)"},
		{"field", head + "     inputs: {x: 1}\n",
			"p.yaml:7:6: invalid YAML: mapping values are not allowed in this context (line 7 is indented by 5 spaces, unlike any line above it (0, 2, 4 spaces): YAML nests by indentation, so a field must line up with the fields beside it)"},
		{"deeper", head + "    inputs:\n      x: 1\n     y: 2\n    retries: 1\n",
			"p.yaml:9:6: invalid YAML: did not find expected key (line 9 is indented by 5 spaces, unlike any line above it (0, 2, 4, 6 spaces): YAML nests by indentation, so a field must line up with the fields beside it)"},
		{"lined up but misplaced", head + "  retries: 1\n  - name: b\n",
			"p.yaml:7:3: invalid YAML: did not find expected '-' indicator (at line 7: check its indentation and the lines before it)"},
	} {
		_, err := Parse("p.yaml", []byte(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got\n%v\nwant\n%s", tc.name, err, tc.want)
		}
	}
}
