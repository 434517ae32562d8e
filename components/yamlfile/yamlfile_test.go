package yamlfile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseRejectsWithPosition: files that are not one YAML mapping get an
// error with a line and column, the offending byte's where there is one.
func TestParseRejectsWithPosition(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "p.yaml:1:1: the file holds no YAML (it is empty or only comments): expected a mapping with apiVersion and kind"},
		{"comments only", "# a\n  # b\n", "p.yaml:1:1: the file holds no YAML (it is empty or only comments): expected a mapping with apiVersion and kind"},
		{"document marker only", "---\n# nothing\n", "p.yaml:1:1: the document is empty: expected a mapping with apiVersion and kind"},
		{"NUL byte", "kind: Pipeline\nmetadata: {na\x00me: x}\n", "p.yaml:2:14: a NUL byte (0x00): this is not a text file (pipectl reads UTF-8 YAML)"},
		{"Latin-1", "kind: Pipeline\n# caf\xe9\n", "p.yaml:2:6: byte 0xE9 is not UTF-8 text (pipectl reads UTF-8 YAML)"},
		{"after multibyte", "a: \"é\xff\"\n", "p.yaml:1:6: byte 0xFF is not UTF-8 text (pipectl reads UTF-8 YAML)"},
		{"control character", "a: b\x07\n", "p.yaml:1:5: control character U+0007 is not allowed in YAML (pipectl reads UTF-8 YAML)"},
		{"binary", "\x7fELF\x02\x01", "p.yaml:1:1: control character U+007F is not allowed in YAML (pipectl reads UTF-8 YAML)"},
		{"second document", "kind: Pipeline\n---\nkind: Component\n", "p.yaml:3:1: a second YAML document (after ---): a file holds one pipeline or component; put each in its own file"},
		{"third document", "kind: Pipeline\n---\n---\n# c\n---\n- x\n", "p.yaml:6:1: a second YAML document (after ---): a file holds one pipeline or component; put each in its own file"},
		{"bad second document", "kind: Pipeline\n---\na: [\n", "p.yaml:3:1: invalid YAML: did not find expected node content"},
		{"not a mapping", "- a\n", "p.yaml:1:1: expected a mapping with apiVersion and kind at the top of the file"},
		{"syntax", "a: b\n c: d\n", "p.yaml:2:2: invalid YAML: mapping values are not allowed in this context (line 2 is indented by 1 space, unlike any line above it (0 spaces): YAML nests by indentation, so a field must line up with the fields beside it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.data))
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for name, data := range map[string]string{
		"plain":             "kind: Pipeline\n",
		"leading marker":    "---\nkind: Pipeline\n",
		"trailing marker":   "kind: Pipeline\n---\n",
		"trailing comment":  "kind: Pipeline\n---\n# the end\n",
		"document end":      "kind: Pipeline\n...\n",
		"BOM, CRLF, tab, é": "\ufeffkind: Pipeline\r\nnote: \"caf\u00e9\t\"\r\n",
	} {
		f, err := Parse("p.yaml", []byte(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n, _, ok := Lookup(f.Root, "kind"); !ok || n.Value != "Pipeline" {
			t.Errorf("%s: kind = %v", name, n.Value)
		}
	}
}
