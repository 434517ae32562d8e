package gang

import "testing"

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string][2]int{
		"32768\t60999\n": {32768, 60999},
		"1024 65000":     {1024, 65000},
		"garbage":        {32768, 60999},
		"60999 32768":    {32768, 60999},
	} {
		if lo, hi := parsePortRange(in); lo != want[0] || hi != want[1] {
			t.Errorf("parsePortRange(%q) = %d, %d, want %v", in, lo, hi, want)
		}
	}
}
