package ui

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// displayDigits is how many significant digits a number is shown with.
const displayDigits = 4

// rounded is s, a value as written, for display: a decimal number with more
// significant digits than displayDigits is rounded to them, and the exact
// text is its title (shown on hover); any other text is s.
func rounded(s string) string {
	t := strings.TrimSpace(s)
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !strings.ContainsAny(t, ".eE") || f == 0 {
		return s
	}
	var r string
	if a := math.Abs(f); a >= 1e-3 && a < 1e15 {
		decimals := max(0, displayDigits-int(math.Floor(math.Log10(a)))-1)
		r = strconv.FormatFloat(f, 'f', decimals, 64)
		if strings.Contains(r, ".") {
			r = strings.TrimRight(strings.TrimRight(r, "0"), ".")
		}
	} else {
		r = strconv.FormatFloat(f, 'g', displayDigits, 64)
	}
	// A value the rounding does not change is shown as written (1.0, 0.5).
	if g, err := strconv.ParseFloat(r, 64); err != nil || g == f || len(r) >= len(t) {
		return s
	}
	return r
}

// number renders s as rounded shows it, in a span whose title is the
// exact text when they differ.
func number(s string) template.HTML {
	r := rounded(s)
	if r == s {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(`<span class="rounded" title="` + template.HTMLEscapeString(s) + `">` + template.HTMLEscapeString(r) + `</span>`)
}
