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
