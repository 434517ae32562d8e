package yamlfile

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
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

// maxIndentHintLines and maxIndentHintBytes bound the files indentHint
// reparses (once per line from the reported one).
const (
	maxIndentHintLines = 2000
	maxIndentHintBytes = 64 << 10
)

// indentHint finds the line that causes a YAML syntax error yaml.v3
// reports at line (1-based), which is the start of the block the error is
// in, not the line that breaks it: the first line from there on whose
// prefix of the file fails to parse with the same message msg. When that
// line is indented unlike every line before it, the hint says so. It returns the line, its column (its first character) and the hint;
// "" when the error is not of that kind.
func indentHint(data []byte, line int, msg string) (int, int, string) {
	lines := strings.Split(string(data), "\n")
	if line < 1 || len(lines) > maxIndentHintLines || len(data) > maxIndentHintBytes {
		return 0, 0, ""
	}
	bad := 0
	for k := line; k <= len(lines); k++ {
		var doc yaml.Node
		err := yaml.Unmarshal([]byte(strings.Join(lines[:k], "\n")+"\n"), &doc)
		if err == nil {
			continue
		}
		if m := lineRE().FindStringSubmatch(err.Error()); m != nil && m[2] == msg {
			bad = k
			break
		}
	}
	if bad == 0 {
		return 0, 0, ""
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	text := lines[bad-1]
	ind := indent(text)
	// The indentations of the lines before it, and whether the bad line
	// lines up with one of them.
	seen := map[int]bool{}
	var levels []int
	for _, l := range lines[:bad-1] {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		i := indent(l)
		if strings.HasPrefix(t, "- ") {
			// A list item's own key lines up with the text after "- ".
			if !seen[i+2] {
				seen[i+2] = true
				levels = append(levels, i+2)
			}
		}
		if !seen[i] {
			seen[i] = true
			levels = append(levels, i)
		}
	}
	if seen[ind] || len(levels) == 0 {
		return bad, ind + 1, fmt.Sprintf(" (at line %d: check its indentation and the lines before it)", bad)
	}
	slices.Sort(levels)
	want := make([]string, len(levels))
	for i, l := range levels {
		want[i] = strconv.Itoa(l)
	}
	return bad, ind + 1, fmt.Sprintf(" (line %d is indented by %d %s, unlike any line above it (%s): YAML nests by indentation, so a field must line up with the fields beside it)", bad, ind, spaces(ind), strings.Join(want, ", ")+" "+spaces(levels[len(levels)-1]))
}

func spaces(n int) string {
	if n == 1 {
		return "space"
	}
	return "spaces"
}
