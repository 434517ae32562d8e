package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
)

// A rank pod's runtime reads its ranks' metrics files itself and echoes
// each rank's new metrics to the pod's log as a Report line (starting
// wire.ProgressMarker), at most every EchoInterval while they change: the
// launcher, which follows the pod's log, counts it as the rank's progress
// (a rank that only reports metrics is not stalled) and adds its points to
// its series, as a local gang adds the lines it reads. However many lines
// a rank appends, the log gets at most one Report a rank per EchoInterval,
// holding at most MaxReportPoints of them (evenly thinned, the latest
// kept) in at most MaxReportLine bytes.

// EchoInterval is how often at most a rank's Report is echoed.
const EchoInterval = 500 * time.Millisecond

// MaxReportLine bounds a Report line the launcher reads, in bytes: a
// longer line is not a Report.
const MaxReportLine = 16 << 10

// MaxReportPoints bounds the points of one Report: a rank appending more
// metric lines than that every EchoInterval has its series thinned (its
// counts stay exact).
const MaxReportPoints = 64

// Report is a rank's metrics as echoed to its pod's log: the rank, the
// metric lines it appended so far (Malformed of them skipped), its last
// step and last value of each metric, and the points it reported since
// the last Report (all of them, or an evenly thinned subset).
type Report struct {
	Rank      int                `json:"rank"`
	Lines     int64              `json:"lines"`
	Malformed int64              `json:"malformed,omitempty"`
	Step      *int64             `json:"step,omitempty"`
	Last      map[string]float64 `json:"last,omitempty"`
	Points    []ReportPoint      `json:"points,omitempty"`
}

// ReportPoint is a metric line of a Report: its step (nil without one)
// and its other values.
type ReportPoint struct {
	Step   *int64             `json:"s,omitempty"`
	Values map[string]float64 `json:"v"`
}

// Line is the report's log line: the marker, its JSON, a newline.
func (r Report) Line() []byte {
	b, _ := json.Marshal(r) // numbers and strings only: cannot fail
	return append(append([]byte(wire.ProgressMarker), b...), '\n')
}

// ParseReport reads a Report line (without its newline); ok is false when
// line does not start with the marker.
func ParseReport(line []byte) (r Report, ok bool, err error) {
	rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte(wire.ProgressMarker))
	if !ok {
		return Report{}, false, nil
	}
	if len(line) > MaxReportLine {
		return Report{}, true, fmt.Errorf("a progress report of %d bytes, at most %d", len(line), MaxReportLine)
	}
	if err := json.Unmarshal(rest, &r); err != nil {
		return Report{}, true, fmt.Errorf("a progress report: %w", err)
	}
	if r.Rank < 0 || len(r.Last) > MaxMetrics*4 || len(r.Points) > MaxReportPoints {
		return Report{}, true, errors.New("a progress report: a negative rank, too many metrics or too many points")
	}
	return r, true, nil
}

// Report notes a rank's echoed metrics: progress of rank (the rank the
// tracker follows for the pod, which may run several) and the report's
// points, of the report's own rank, added to the series; the lines the
// report counts that are not among its points (thinned by the echo,
// malformed) are counted too, so that the series' counts are the rank's.
func (t *Tracker) Report(rank int, r Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	s := t.rank(rank)
	s.last = now
	if r.Step != nil {
		s.step = r.Step
	}
	if t.reported == nil {
		t.reported = map[int]Report{}
	}
	prev := t.reported[r.Rank]
	if r.Lines < prev.Lines || r.Malformed < prev.Malformed {
		prev = Report{} // the rank's file started over
	}
	t.reported[r.Rank] = Report{Lines: r.Lines, Malformed: r.Malformed}
	malformed := r.Malformed - prev.Malformed
	t.series.Count(r.Lines-prev.Lines-malformed-int64(len(r.Points)), malformed)
	if malformed > 0 || len(r.Points) > 0 {
		t.changed = true
	}
	for _, p := range r.Points {
		t.series.Add(record.MetricPoint{Time: now, Rank: r.Rank, Attempt: t.attempt, Step: p.Step, Values: p.Values})
	}
}

// takePending returns the points added since the last call (at most the
// pending series' bound, thinned evenly) and starts afresh.
func (t *Tracker) takePending() []ReportPoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil || t.pending.Len() == 0 {
		return nil
	}
	pts := t.pending.Progress(true).Points
	t.pending = NewSeries(MaxReportPoints)
	out := make([]ReportPoint, len(pts))
	for i, p := range pts {
		out[i] = ReportPoint{Step: p.Step, Values: p.Values}
	}
	return out
}

// reportLine is r's line, its points thinned until it fits MaxReportLine.
func reportLine(r Report) []byte {
	line := r.Line()
	for len(line) > MaxReportLine && len(r.Points) > 1 {
		if len(r.Points) <= 2 {
			r.Points = r.Points[len(r.Points)-1:]
		} else {
			r.Points = Thin(r.Points, len(r.Points)/2)
		}
		line = r.Line()
	}
	return line
}

// Echo follows the metrics files of a pod's ranks (paths by rank) and
// writes a Report line for each rank whose metrics changed, to write, at
// most every EchoInterval, until stop is called: then it reads the files a
// last time, echoes what changed and returns the reports of the ranks that
// skipped malformed lines. Its memory is bounded whatever the files hold.
func Echo(paths map[int]string, write func([]byte)) (stop func() []Report) {
	type follower struct {
		files *Files
		tr    *Tracker
	}
	fs := make(map[int]follower, len(paths))
	for r, p := range paths {
		tr := NewTracker(2, nil)
		tr.pending = NewSeries(MaxReportPoints)
		fs[r] = follower{files: NewFiles(map[int]string{r: p}), tr: tr}
	}
	echo := func() {
		for r, f := range fs {
			_ = f.files.Poll(f.tr)
			p, changed := f.tr.Progress(false)
			if changed {
				write(reportLine(Report{Rank: r, Lines: p.Lines, Malformed: p.Malformed, Step: p.Step, Last: p.Last, Points: f.tr.takePending()}))
			}
		}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(EchoInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				echo()
			}
		}
	}()
	return func() []Report {
		close(done)
		<-ended
		echo()
		var bad []Report
		for r, f := range fs {
			if p, _ := f.tr.Progress(false); p.Malformed > 0 {
				bad = append(bad, Report{Rank: r, Lines: p.Lines, Malformed: p.Malformed})
			}
		}
		return bad
	}
}
