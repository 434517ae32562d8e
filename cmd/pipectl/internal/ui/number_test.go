package ui

import "testing"

func TestRounded(t *testing.T) {
	for in, want := range map[string]string{
		"0.8943409990967831":   "0.8943",
		"0.86625":              "0.8662",
		"0.5":                  "0.5",
		"7":                    "7",
		"12345678901234567890": "12345678901234567890",
		"12345.678":            "12346",
		"123.456789":           "123.5",
		"1e-3":                 "1e-3",
		"0.000012345678":       "1.235e-05",
		"-2.718281828":         "-2.718",
		"abc":                  "abc",
		"1.0":                  "1.0",
		"":                     "",
	} {
		if got := rounded(in); got != want {
			t.Errorf("rounded(%q) = %q, want %q", in, got, want)
		}
	}
	if got := number("0.8943409990967831"); got != `<span class="rounded" title="0.8943409990967831">0.8943</span>` {
		t.Errorf("number: %s", got)
	}
	if got := number("<b>"); got != "&lt;b&gt;" {
		t.Errorf("number escapes: %s", got)
	}
}
