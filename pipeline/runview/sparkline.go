package runview

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/record"
)

const (
	// sparkWidth is the most characters a sparkline has; maxSparklines
	// bounds the metrics WriteGang draws.
	sparkWidth    = 32
	maxSparklines = 8
)

var sparkBars = []rune("▁▂▃▄▅▆▇█")

// Sparklines are the curves of a step's reported metrics, one line each
// (sorted by name): "loss ▇▆▄▃▂▁ 0.99 → 0.5 (50 points)", drawn from the
// points of the lowest rank that reports the metric, every attempt in turn.
func Sparklines(p *record.Progress) []string {
	if p == nil {
		return nil
	}
	byName := map[string][]float64{}
	rankOf := map[string]int{}
	for _, pt := range p.Points {
		for name, v := range pt.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if r, ok := rankOf[name]; ok && r < pt.Rank {
				continue
			} else if ok && r > pt.Rank {
				byName[name] = nil // a lower rank reports it: its points instead
			}
			rankOf[name] = pt.Rank
			byName[name] = append(byName[name], v)
		}
	}
	var out []string
	for i, name := range slices.Sorted(maps.Keys(byName)) {
		if i == maxSparklines {
			out = append(out, fmt.Sprintf("and %d more metric(s) (-o json has them)", len(byName)-i))
			break
		}
		vs := byName[name]
		if len(vs) < 2 {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s → %s (%d points)", name, Sparkline(vs, sparkWidth), fnum(vs[0]), fnum(vs[len(vs)-1]), len(vs)))
	}
	return out
}

// Sparkline draws vs in at most width block characters, evenly sampled.
func Sparkline(vs []float64, width int) string {
	if len(vs) == 0 || width < 1 {
		return ""
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	n := min(len(vs), width)
	var b strings.Builder
	for i := range n {
		v := vs[0]
		if n > 1 {
			v = vs[i*(len(vs)-1)/(n-1)]
		}
		level := len(sparkBars) / 2
		if hi > lo {
			level = int((v - lo) / (hi - lo) * float64(len(sparkBars)-1))
		}
		b.WriteRune(sparkBars[level])
	}
	return b.String()
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
