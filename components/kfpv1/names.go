package kfpv1

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Names as KFP v1 derives them (kfp.components._naming): lower case, every
// run of characters other than letters and digits (underscores included)
// one separator, no leading or trailing separator, "n" before a leading
// digit; '_' separates words of input and output names, '-' those of the
// component's name (a DNS label here, so also cut to 63 characters).

var (
	kfpNonWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\p{L}\p{N}]+`) })
	kfpDigitRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\p{Nd}`) })
)

// kfpNormalize is KFP's _normalize_identifier_name with sep between words.
func kfpNormalize(name, sep string) string {
	s := strings.Trim(kfpNonWordRE().ReplaceAllString(strings.ToLower(name), " "), " ")
	if kfpDigitRE().MatchString(s) {
		s = "n" + s
	}
	return strings.ReplaceAll(s, " ", sep)
}

// kfpIdent is the pipectl name of a KFP input or output ("Training data" is
// training_data).
func kfpIdent(name string) string { return kfpNormalize(name, "_") }

// kfpResourceName is the pipectl name of a KFP component.
func kfpResourceName(name string) string {
	s := kfpNormalize(name, "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}

// kfpNameTable maps each name to its identifier, unique among them as KFP's
// generate_unique_name_conversion_table makes it: names that are already
// identifiers keep them; each other name, in order, takes its identifier or,
// when that is taken, the identifier of "NAME 2", "NAME 3", ...
func kfpNameTable(names []string) map[string]string {
	out := map[string]string{}
	taken := map[string]bool{}
	var convert []string
	for _, n := range names {
		if kfpIdent(n) == n {
			out[n], taken[n] = n, true
		} else {
			convert = append(convert, n)
		}
	}
	for _, n := range convert {
		if _, done := out[n]; done {
			continue // a duplicate name: reported where it is declared
		}
		id := kfpIdent(n)
		for i := 2; taken[id]; i++ {
			id = kfpIdent(fmt.Sprintf("%s %d", n, i))
		}
		out[n], taken[id] = id, true
	}
	return out
}
