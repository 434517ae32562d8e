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
// each rank's latest metrics to the pod's log as a Report line (starting
// wire.ProgressMarker), at most every EchoInterval while they change: the
// launcher, which follows the pod's log, counts it as the rank's progress
// (a rank that only reports metrics is not stalled) and adds its point to
// its series. However many lines a rank appends, the log gets at most one
// Report a rank per EchoInterval.

// EchoInterval is how often at most a rank's Report is echoed.
const EchoInterval = 500 * time.Millisecond

// MaxReportLine bounds a Report line the launcher reads, in bytes: a
// longer line is not a Report.
const MaxReportLine = 16 << 10

// Report is a rank's metrics as echoed to its pod's log: the rank, the
// metric lines it appended so far (Malformed of them skipped), its last
// step and last value of each metric.
type Report struct {
	Rank      int                `json:"rank"`
	Lines     int64              `json:"lines"`
	Malformed int64              `json:"malformed,omitempty"`
	Step      *int64             `json:"step,omitempty"`
	Last      map[string]float64 `json:"last,omitempty"`
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
	if r.Rank < 0 || len(r.Last) > MaxMetrics*4 {
		return Report{}, true, errors.New("a progress report: a negative rank or too many metrics")
	}
	return r, true, nil
}

// Report notes a rank's echoed metrics: progress of rank (the rank the
// tracker follows for the pod, which may run several) and, when it holds
// values, a point of the series, of the report's own rank.
func (t *Tracker) Report(rank int, r Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	s := t.rank(rank)
	s.last = now
	if r.Step != nil {
		s.step = r.Step
	}
	if r.Step == nil && len(r.Last) == 0 {
		return
	}
	t.changed = true
	t.series.Add(record.MetricPoint{Time: now, Rank: r.Rank, Attempt: t.attempt, Step: r.Step, Values: r.Last})
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
		fs[r] = follower{files: NewFiles(map[int]string{r: p}), tr: NewTracker(2, nil)}
	}
	echo := func() {
		for r, f := range fs {
			_ = f.files.Poll(f.tr)
			p, changed := f.tr.Progress(false)
			if changed {
				write(Report{Rank: r, Lines: p.Lines, Malformed: p.Malformed, Step: p.Step, Last: p.Last}.Line())
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
