package ui

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runview"
)

// A Chart is a line chart drawn as inline SVG by the page's template (no
// script, no library): one metric of a step, a line per rank and gang
// attempt, or a list of numbers (an output).
type Chart struct {
	// Name is the metric; Points the points drawn on all lines.
	Name   string
	Points int
	// Width and Height are the SVG's; the plot is the box X0..X1, Y0..Y1.
	Width, Height  int
	X0, X1, Y0, Y1 int
	// YMin, YMax, XMin and XMax label the axes; Last is the last value.
	YMin, YMax, XMin, XMax, Last string
	// XLabel names the x axis: "step", or "index" for a list.
	XLabel string
	Lines  []ChartLine
}

// ChartLine is one polyline of a chart: its SVG points ("x,y x,y …").
type ChartLine struct {
	Label  string
	Points string
	N      int
	// Color is the line's colour class (0 to chartColors-1).
	Color int
}

const (
	chartWidth, chartHeight = 360, 140
	chartLeft, chartRight   = 52, 8
	chartTop, chartBottom   = 10, 24
	// maxCharts bounds the metrics a step page draws, maxLines the
	// lines of one chart, maxListPoints the numbers of a list drawn.
	maxCharts     = 16
	maxLines      = 8
	maxListPoints = 10000
	chartColors   = 6
)

// series is one line's data before it is scaled.
type series struct {
	label  string
	xs, ys []float64
}

// progressCharts are the charts of the metrics a distributed step's ranks
// reported: one per metric (sorted by name), a line per rank and attempt,
// x the reported "step" (else the point's position on its line).
func progressCharts(p *record.Progress) []*Chart {
	if p == nil || len(p.Points) == 0 {
		return nil
	}
	type lineKey struct{ rank, attempt int }
	byMetric := map[string]map[lineKey]*series{}
	order := map[string][]lineKey{}
	for _, pt := range p.Points {
		key := lineKey{pt.Rank, pt.Attempt}
		for name, v := range pt.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lines := byMetric[name]
			if lines == nil {
				if len(byMetric) == maxCharts {
					continue
				}
				lines = map[lineKey]*series{}
				byMetric[name] = lines
			}
			s := lines[key]
			if s == nil {
				if len(lines) == maxLines {
					continue
				}
				s = &series{label: fmt.Sprintf("rank %d, attempt %d", pt.Rank, pt.Attempt)}
				lines[key] = s
				order[name] = append(order[name], key)
			}
			x := float64(len(s.xs))
			if pt.Step != nil {
				x = float64(*pt.Step)
			}
			s.xs, s.ys = append(s.xs, x), append(s.ys, v)
		}
	}
	var out []*Chart
	for _, name := range slices.Sorted(maps.Keys(byMetric)) {
		var ss []*series
		for _, k := range order[name] {
			ss = append(ss, byMetric[name][k])
		}
		out = append(out, newChart(name, "step", ss))
	}
	return out
}

// listChart is the chart of value when it is a JSON list of at least two
// numbers (a metric's values over epochs, say), else nil.
func listChart(name, value string) *Chart {
	s := listSeries(value)
	if s == nil {
		return nil
	}
	s.label = name
	return newChart(name, "index", []*series{s})
}

// listSeries is value as a series (x its index) when it is a JSON list of
// at least two numbers, else nil.
func listSeries(value string) *series {
	v := strings.TrimSpace(value)
	if !strings.HasPrefix(v, "[") {
		return nil
	}
	var nums []json.Number
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&nums); err != nil || len(nums) < 2 || len(nums) > maxListPoints || dec.More() {
		return nil
	}
	s := &series{}
	for i, n := range nums {
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil
		}
		s.xs, s.ys = append(s.xs, float64(i)), append(s.ys, f)
	}
	return s
}

// newChart scales the lines into the plot box.
func newChart(name, xlabel string, ss []*series) *Chart {
	c := &Chart{Name: name, XLabel: xlabel, Width: chartWidth, Height: chartHeight,
		X0: chartLeft, X1: chartWidth - chartRight, Y0: chartTop, Y1: chartHeight - chartBottom}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i := range s.xs {
			xmin, xmax = math.Min(xmin, s.xs[i]), math.Max(xmax, s.xs[i])
			ymin, ymax = math.Min(ymin, s.ys[i]), math.Max(ymax, s.ys[i])
		}
	}
	c.XMin, c.XMax, c.YMin, c.YMax = num(xmin), num(xmax), num(ymin), num(ymax)
	if ymin == ymax {
		ymin, ymax = ymin-1, ymax+1
	}
	scale := func(v, lo, hi float64, a, b int) float64 {
		if hi == lo {
			return float64(a+b) / 2
		}
		return float64(a) + (v-lo)/(hi-lo)*float64(b-a)
	}
	for i, s := range ss {
		var b strings.Builder
		for j := range s.xs {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", scale(s.xs[j], xmin, xmax, c.X0, c.X1), scale(s.ys[j], ymax, ymin, c.Y0, c.Y1))
		}
		c.Lines = append(c.Lines, ChartLine{Label: s.label, Points: b.String(), N: len(s.xs), Color: i % chartColors})
		c.Points += len(s.xs)
		if len(s.ys) > 0 {
			c.Last = num(s.ys[len(s.ys)-1])
		}
	}
	return c
}

// num formats an axis label: four significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// compareCharts overlay the curves of the compared runs: one chart per
// metric a step's ranks reported (STEP · METRIC) and per list-valued
// metric of a Metrics output, a line per run, coloured by the run's place
// in the comparison (the page's legend). A run's line is its lowest
// rank's last gang attempt.
func compareCharts(recs []*record.Run, metrics []runview.Row) []*Chart {
	type key struct{ name, xlabel string }
	lines := map[key][]*series{} // by chart, one per run (nil: none)
	var order []key
	add := func(k key, run int, s *series) {
		if lines[k] == nil {
			if len(order) == maxCharts {
				return
			}
			lines[k] = make([]*series, len(recs))
			order = append(order, k)
		}
		lines[k][run] = s
	}
	for run, rec := range recs {
		for _, st := range rec.Steps {
			for name, s := range rankCurves(st.Progress) {
				s.label = rec.ID
				add(key{st.Name + " · " + name, "step"}, run, s)
			}
		}
	}
	for _, m := range metrics {
		for run, v := range m.Values {
			if v == nil || run >= len(recs) {
				continue
			}
			if c := listSeries(*v); c != nil {
				c.label = recs[run].ID
				add(key{m.Source + " · " + m.Name, "index"}, run, c)
			}
		}
	}
	var out []*Chart
	for _, k := range order {
		var ss []*series
		var colors []int
		for run, s := range lines[k] {
			if s != nil {
				ss, colors = append(ss, s), append(colors, run%chartColors)
			}
		}
		c := newChart(k.name, k.xlabel, ss)
		for i := range c.Lines {
			c.Lines[i].Color = colors[i]
		}
		out = append(out, c)
	}
	return out
}

// rankCurves are the series of each metric of p's lowest rank in its
// last gang attempt, x the reported "step" (else the point's position).
func rankCurves(p *record.Progress) map[string]*series {
	if p == nil || len(p.Points) == 0 {
		return nil
	}
	rank, attempt := p.Points[0].Rank, p.Points[0].Attempt
	for _, pt := range p.Points {
		if pt.Rank < rank || (pt.Rank == rank && pt.Attempt > attempt) {
			rank, attempt = pt.Rank, pt.Attempt
		}
	}
	out := map[string]*series{}
	for _, pt := range p.Points {
		if pt.Rank != rank || pt.Attempt != attempt {
			continue
		}
		for name, v := range pt.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			s := out[name]
			if s == nil {
				if len(out) == maxCharts {
					continue
				}
				s = &series{}
				out[name] = s
			}
			x := float64(len(s.xs))
			if pt.Step != nil {
				x = float64(*pt.Step)
			}
			s.xs, s.ys = append(s.xs, x), append(s.ys, v)
		}
	}
	return out
}
