package runview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetrics(t *testing.T) {
	cases := []struct {
		in   string
		want []Metric
		ok   bool
	}{
		{`{"accuracy": 0.86275, "auc": 0.8932, "rows": 20000}`,
			[]Metric{{"accuracy", "0.86275"}, {"auc", "0.8932"}, {"rows", "20000"}}, true},
		{`{"loss": 1.0, "eval": {"f1": 0.5, "ok": true}, "note": "x", "hist": [1, 2]}`,
			[]Metric{{"eval.f1", "0.5"}, {"eval.ok", "true"}, {"hist", "[1,2]"}, {"loss", "1.0"}, {"note", "x"}}, true},
		{`{"metrics": [{"name": "accuracy-score", "numberValue": 0.9, "format": "PERCENTAGE"}]}`,
			[]Metric{{"accuracy-score", "0.9"}}, true},
		{`[1, 2]`, nil, false},
		{`{"a": 1} {"b": 2}`, nil, false},
		{`not json`, nil, false},
	}
	for _, c := range cases {
		got, ok := ParseMetrics([]byte(c.in))
		if ok != c.ok {
			t.Errorf("ParseMetrics(%s) ok = %v, want %v", c.in, ok, c.ok)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseMetrics(%s) (-want +got):\n%s", c.in, diff)
		}
	}
}
