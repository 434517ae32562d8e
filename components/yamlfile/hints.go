package yamlfile

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// UnquotedTemplate reports whether n is what YAML makes of a template
// written without quotes, `{{params.rows}}`: a flow mapping whose one key is
// a flow mapping whose one key has no value. text is the template as
// written, for the hint to quote it.
func UnquotedTemplate(n *yaml.Node) (text string, ok bool) {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 || len(n.Content) != 2 || !isEmpty(n.Content[1]) {
		return "", false
	}
	inner := n.Content[0]
	if inner.Kind != yaml.MappingNode || len(inner.Content) != 2 || !isEmpty(inner.Content[1]) || inner.Content[0].Kind != yaml.ScalarNode {
		return "", false
	}
	return "{{" + inner.Content[0].Value + "}}", true
}

// QuoteHint is the hint for a value that is an unquoted template (see
// UnquotedTemplate), "" for any other.
func QuoteHint(n *yaml.Node) string {
	if t, ok := UnquotedTemplate(n); ok {
		return fmt.Sprintf(` (YAML reads %s without quotes as a mapping: write "%s", in quotes)`, t, t)
	}
	return ""
}

// tabHint is the hint for a YAML syntax error at line (1-based) of data
// that a tab in its indentation (or the indentation of the line before)
// likely caused: YAML indents with spaces only.
func tabHint(data []byte, line int) string {
	lines := bytes.Split(data, []byte("\n"))
	for _, l := range []int{line, line - 1, line + 1} {
		if l < 1 || l > len(lines) {
			continue
		}
		text := lines[l-1]
		indent := text[:len(text)-len(bytes.TrimLeft(text, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return fmt.Sprintf(" (line %d is indented with a tab: YAML indents with spaces only)", l)
		}
	}
	return ""
}

// didYouMean is `: did you mean "X"?` for the name among names closest to
// name, when one is close enough to be a likely typo (a case difference,
// or an edit distance of at most 2 and under a third of the name), else "".
func didYouMean(name string, names []string) string {
	best, bestD := "", 1<<30
	for _, c := range names {
		d := distance(strings.ToLower(name), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > 2 || bestD*3 > len(name) && bestD > 0 {
		return ""
	}
	return fmt.Sprintf(": did you mean %q?", best)
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean is `: did you mean "X"?` for the name among names closest to
// name, when one is close enough to be a likely typo, else "".
func DidYouMean(name string, names []string) string { return didYouMean(name, names) }
