package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// Limits of the metrics a rank reports.
const (
	// MaxLine bounds one metric line, in bytes.
	MaxLine = 64 << 10
	// MaxMetrics bounds the keys of one metric line.
	MaxMetrics = 32
	// MaxName bounds a metric's name, in bytes.
	MaxName = 128
	// MaxPoints bounds the points a series keeps.
	MaxPoints = 1000
)

// StepKey is the key of a metric line that is the x-axis.
const StepKey = "step"

// ParseLine reads one metric line: a JSON object of numbers, "step" an
// integer. It returns the step (nil without one) and the other values.
func ParseLine(line []byte) (*int64, map[string]float64, error) {
	line = bytes.TrimSpace(line)
	if len(line) > MaxLine {
		return nil, nil, fmt.Errorf("longer than %d bytes", MaxLine)
	}
	if len(line) == 0 || line[0] != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var raw map[string]any
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, nil, err
	}
	if len(raw) > MaxMetrics {
		return nil, nil, fmt.Errorf("%d keys, at most %d", len(raw), MaxMetrics)
	}
	var step *int64
	values := make(map[string]float64, len(raw))
	for k, v := range raw {
		if len(k) == 0 || len(k) > MaxName {
			return nil, nil, fmt.Errorf("a key of %d bytes: expected 1 to %d", len(k), MaxName)
		}
		f, ok := v.(float64)
		if !ok {
			return nil, nil, fmt.Errorf("%q: expected a number, got %T", k, v)
		}
		if k == StepKey {
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, nil, fmt.Errorf("step: expected an integer, got %v", f)
			}
			n := int64(f)
			step = &n
			continue
		}
		values[k] = f
	}
	return step, values, nil
}

// Series is a bounded time series of metric points: every point while
// there are at most MaxPoints (its max), then every second one of them and
// of the points that follow, then every fourth, …: the whole run at an
// even resolution, the first and the latest point always kept.
type Series struct {
	max       int
	stride    int64 // a point is kept when its index is a multiple of stride
	seen      int64 // the points added
	points    []record.MetricPoint
	latest    *record.MetricPoint // the last point added, when not in points
	lastStep  *int64
	last      map[string]float64
	updated   time.Time
	malformed int64
}

// NewSeries returns a series of at most max points (MaxPoints when max < 2).
func NewSeries(max int) *Series {
	if max < 2 {
		max = MaxPoints
	}
	return &Series{max: max, stride: 1, last: map[string]float64{}}
}

// Add adds a point.
func (s *Series) Add(p record.MetricPoint) {
	s.updated = p.Time
	if p.Step != nil {
		s.lastStep = p.Step
	}
	for k, v := range p.Values {
		if _, ok := s.last[k]; ok || len(s.last) < MaxMetrics*4 {
			s.last[k] = v
		}
	}
	i := s.seen
	s.seen++
	if i%s.stride != 0 {
		s.latest = &p
		return
	}
	s.latest = nil
	s.points = append(s.points, p)
	if len(s.points) >= s.max {
		// Keep the points of indices that are multiples of 2*stride: those
		// at even positions.
		kept := s.points[:0]
		for j := 0; j < len(s.points); j += 2 {
			kept = append(kept, s.points[j])
		}
		clear(s.points[len(kept):])
		s.points = kept
		s.stride *= 2
	}
}

// Malformed counts a skipped line.
func (s *Series) Malformed() { s.malformed++ }

// Count counts lines read elsewhere that are not points of the series:
// points thinned out before they reached it, and malformed lines.
func (s *Series) Count(points, malformed int64) {
	s.seen += max(points, 0)
	s.malformed += max(malformed, 0)
}

// Len is the number of points the series holds.
func (s *Series) Len() int {
	if s.latest != nil {
		return len(s.points) + 1
	}
	return len(s.points)
}

// Progress returns the series as it is now (a copy): with its points when
// points is set, else only its summary (the last step and values).
func (s *Series) Progress(points bool) record.Progress {
	p := record.Progress{Updated: s.updated, Step: s.lastStep, Lines: s.seen + s.malformed, Malformed: s.malformed}
	if points {
		p.Points = make([]record.MetricPoint, 0, s.Len())
		p.Points = append(p.Points, s.points...)
		if s.latest != nil {
			p.Points = append(p.Points, *s.latest)
		}
	}
	if len(s.last) > 0 {
		p.Last = make(map[string]float64, len(s.last))
		for k, v := range s.last {
			p.Last[k] = v
		}
	}
	return p
}
