package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

func TestListChart(t *testing.T) {
	c := listChart("loss", "[0.9, 0.6, 0.45]")
	if c == nil || c.Points != 3 || len(c.Lines) != 1 || c.YMax != "0.9" || c.YMin != "0.45" || c.Last != "0.45" {
		t.Fatalf("listChart = %+v", c)
	}
	// x from 52 to 352, y from 10 (0.9) to 116 (0.45).
	if want := "52.0,10.0 202.0,80.7 352.0,116.0"; c.Lines[0].Points != want {
		t.Errorf("points %q, want %q", c.Lines[0].Points, want)
	}
	for _, v := range []string{"", "0.5", "[1]", `["a", 1]`, "[1, 2] x", "[1e400, 2]", `{"a": [1,2]}`} {
		if c := listChart("x", v); c != nil {
			t.Errorf("listChart(%q) = %+v, want none", v, c)
		}
	}
	if c := listChart("flat", "[2, 2, 2]"); c == nil || strings.Contains(c.Lines[0].Points, "NaN") {
		t.Errorf("flat list: %+v", c)
	}
}

func TestProgressCharts(t *testing.T) {
	step := func(n int64) *int64 { return &n }
	p := &record.Progress{}
	for i := int64(0); i < 10; i++ {
		// Attempt 1 reports steps 0-5, attempt 2 resumes at 4; rank 1 reports accuracy only.
		a, s := 1, i
		if i > 5 {
			a, s = 2, i-2
		}
		p.Points = append(p.Points, record.MetricPoint{Rank: 0, Attempt: a, Step: step(s), Values: map[string]float64{"loss": 1 / float64(i+1)}})
		p.Points = append(p.Points, record.MetricPoint{Rank: 1, Attempt: a, Step: step(s), Values: map[string]float64{"accuracy": float64(i) / 10}})
	}
	cs := progressCharts(p)
	if len(cs) != 2 || cs[0].Name != "accuracy" || cs[1].Name != "loss" {
		t.Fatalf("charts %+v", cs)
	}
	loss := cs[1]
	if loss.Points != 10 || len(loss.Lines) != 2 || loss.Lines[0].N != 6 || loss.Lines[1].N != 4 || loss.XMax != "7" || loss.Lines[1].Label != "rank 0, attempt 2" {
		t.Errorf("loss chart %+v", loss)
	}
}

// TestChartPage: the step page draws a step's reported metrics and a
// list-valued output as SVG charts, names escaped.
func TestChartPage(t *testing.T) {
	store, rec := fixture(t)
	one := int64(1)
	rec.Status = record.StatusRunning
	rec.Steps[0].Progress = &record.Progress{Updated: time.Unix(120, 0), Points: []record.MetricPoint{
		{Rank: 0, Attempt: 1, Values: map[string]float64{"<b>loss": 0.9}},
		{Rank: 0, Attempt: 1, Step: &one, Values: map[string]float64{"<b>loss": 0.5}},
	}}
	list := "[0.9,0.6,0.45]"
	rec.Steps[0].Outputs = append(rec.Steps[0].Outputs, record.OutputRecord{Name: "curve", Type: "json", Value: &list})
	if err := recordstore.WriteRun(context.Background(), store, rec); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, store, "")
	for _, path := range []string{"/runs/r1?step=make", "/runs/r1?step=make&part=live"} {
		body := get(h, path).Body.String()
		if !strings.Contains(body, `<figure class="chart" data-metric="&lt;b&gt;loss" data-points="2">`) {
			t.Errorf("%s: no escaped chart of the reported metric:\n%s", path, body)
		}
		if !regexp.MustCompile(`<figure class="chart" data-metric="curve" data-points="3">[\s\S]*?<polyline class="line c0" points="52.0,10.0 202.0,80.7 352.0,116.0" data-points="3">`).MatchString(body) {
			t.Errorf("%s: no chart of the list output:\n%s", path, body)
		}
		if strings.Contains(body, "<b>loss") || strings.Contains(body, ">[0.9,0.6,0.45]<") {
			t.Errorf("%s: unescaped name or the list as text", path)
		}
	}
}
