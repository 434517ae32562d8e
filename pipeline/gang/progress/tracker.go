package progress

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// Tracker follows the ranks of a gang across its attempts: when each last
// made progress (printed a line, reported a metric), what it printed last,
// and the metrics series of them all. It is safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	now     func() time.Time
	attempt int
	start   time.Time // the attempt's start
	ranks   map[int]*rankState
	series  *Series
	changed bool // the series changed since the last Progress
	// pending, when set, also gets every point (Echo: the points of the
	// next report).
	pending *Series
	// reported are the counts of the last report of each rank in this
	// attempt (Report).
	reported map[int]Report
}

type rankState struct {
	last time.Time // the last progress; zero when none in this attempt
	cur  []byte    // the line being printed, at most record.MaxLastLine bytes
	line string    // the last complete non-empty line
	step *int64
}

// NewTracker returns a tracker whose series keeps at most maxPoints points
// (MaxPoints when maxPoints < 2); now is the clock (time.Now when nil).
func NewTracker(maxPoints int, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{now: now, ranks: map[int]*rankState{}, series: NewSeries(maxPoints)}
}

// Begin starts attempt attempt of the gang with the given ranks: their
// progress starts afresh (the series goes on).
func (t *Tracker) Begin(attempt int, ranks []int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.attempt, t.start = attempt, t.now()
	t.reported = nil
	t.ranks = make(map[int]*rankState, len(ranks))
	for _, r := range ranks {
		t.ranks[r] = &rankState{}
	}
}

// Started restarts the attempt's clock: its idle time counts from now
// (its ranks all run: the time spent waiting for them is not a stall);
// what they printed before is kept.
func (t *Tracker) Started() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = t.now()
}

func (t *Tracker) rank(r int) *rankState {
	s, ok := t.ranks[r]
	if !ok {
		s = &rankState{}
		t.ranks[r] = s
	}
	return s
}

// Writer returns a writer that passes the output of rank to w and counts
// each write as the rank's progress.
func (t *Tracker) Writer(rank int, w io.Writer) io.Writer {
	return &rankWriter{t: t, rank: rank, w: w}
}

type rankWriter struct {
	t    *Tracker
	rank int
	w    io.Writer
}

func (w *rankWriter) Write(p []byte) (int, error) {
	w.t.printed(w.rank, p)
	return w.w.Write(p)
}

// printed notes output p of rank: its progress and its last line.
func (t *Tracker) printed(rank int, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.rank(rank)
	s.last = t.now()
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.cur = appendBounded(s.cur, p)
			return
		}
		s.cur = appendBounded(s.cur, p[:i])
		if len(bytes.TrimSpace(s.cur)) > 0 {
			s.line = string(s.cur)
		}
		s.cur = s.cur[:0]
		p = p[i+1:]
	}
}

func appendBounded(b, p []byte) []byte {
	return append(b, p[:min(len(p), record.MaxLastLine-len(b))]...)
}

// Metric notes a metric line of rank: a point of the series and the rank's
// progress, or a malformed line.
func (t *Tracker) Metric(rank int, line []byte) {
	step, values, err := ParseLine(line)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.changed = true
	if err != nil {
		t.series.Malformed()
		return
	}
	now := t.now()
	s := t.rank(rank)
	s.last = now
	if step != nil {
		s.step = step
	}
	p := record.MetricPoint{Time: now, Rank: rank, Attempt: t.attempt, Step: step, Values: values}
	t.series.Add(p)
	if t.pending != nil {
		t.pending.Add(p)
	}
}

// Idle is how long no rank made progress: since the latest progress of
// any rank in this attempt, or since the attempt began.
func (t *Tracker) Idle() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.start
	for _, s := range t.ranks {
		if s.last.After(last) {
			last = s.last
		}
	}
	return t.now().Sub(last)
}

// Ranks returns the state of every rank, by rank.
func (t *Tracker) Ranks() []record.RankState {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	out := make([]record.RankState, 0, len(t.ranks))
	for r, s := range t.ranks {
		st := record.RankState{Rank: r, LastLine: s.line, Step: s.step}
		if len(bytes.TrimSpace(s.cur)) > 0 {
			st.LastLine = string(s.cur) // a line still being printed (a progress bar)
		}
		since := t.start
		if !s.last.IsZero() {
			last := s.last
			st.LastProgress, since = &last, last
		}
		st.Idle = now.Sub(since).Round(100 * time.Millisecond).String()
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b record.RankState) int { return a.Rank - b.Rank })
	return out
}

// Progress returns the series as it is now (with its points when points
// is set, else its summary), and whether it changed since the last call.
func (t *Tracker) Progress(points bool) (record.Progress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := t.changed
	t.changed = false
	return t.series.Progress(points), changed
}
