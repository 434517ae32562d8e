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
	s := &series{label: name}
	for i, n := range nums {
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil
		}
		s.xs, s.ys = append(s.xs, float64(i)), append(s.ys, f)
	}
	return newChart(name, "index", []*series{s})
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
