package record

import (
	"fmt"
	"strings"
	"time"
)

// Reasons a gang attempt ended without success (GangAttempt.Reason).
const (
	// ReasonStalled: no rank made progress for the step's stallTimeout.
	ReasonStalled = "stalled"
	// ReasonFailed: a rank exited non-zero (or could not start).
	ReasonFailed = "failed"
	// ReasonStartup: not every rank pod ran within the step's
	// startupTimeout (Kubernetes); the message names the ranks that did
	// not and why (the scheduler's reason, a waiting container's).
	ReasonStartup = "startup"
)

// GangAttempt is one attempt of a distributed step's gang that did not
// succeed: restarted when restarts were left, else the step's failure.
type GangAttempt struct {
	// Attempt is the attempt's number, from 1.
	Attempt int `json:"attempt"`
	// Reason is ReasonStalled, ReasonFailed or ReasonStartup.
	Reason string `json:"reason"`
	// Message says what happened, as the step's log says it.
	Message string `json:"message"`
	// Restarted says the gang was started again after it.
	Restarted bool `json:"restarted"`
	// Ranks are the state of every rank when a stalled attempt was stopped.
	Ranks []RankState `json:"ranks,omitempty"`
}

// RankState is what a rank last did, seen when its gang was stopped.
type RankState struct {
	// Rank is the global rank.
	Rank int `json:"rank"`
	// LastProgress is when the rank last printed a line or reported a
	// metric; nil when it never did.
	LastProgress *time.Time `json:"lastProgress,omitempty"`
	// Idle is how long before the stop that was (since the attempt's
	// start when it never made progress), in Go's text form ("1m30s").
	Idle string `json:"idle"`
	// LastLine is the last line the rank printed (cut to MaxLastLine bytes).
	LastLine string `json:"lastLine,omitempty"`
	// Step is the last "step" the rank reported as a metric.
	Step *int64 `json:"step,omitempty"`
}

// String says what the rank last did: `rank 1: last progress 12s ago
// (step 40), last line "epoch 3"`, or `rank 1: no progress in 12s,
// printed nothing`.
func (r RankState) String() string {
	var b strings.Builder
	if r.LastProgress == nil {
		fmt.Fprintf(&b, "rank %d: no progress in %s", r.Rank, r.Idle)
	} else {
		fmt.Fprintf(&b, "rank %d: last progress %s ago", r.Rank, r.Idle)
	}
	if r.Step != nil {
		fmt.Fprintf(&b, " (step %d)", *r.Step)
	}
	if r.LastLine != "" {
		fmt.Fprintf(&b, ", last line %q", r.LastLine)
	} else {
		b.WriteString(", printed nothing")
	}
	return b.String()
}

// MaxLastLine bounds RankState.LastLine.
const MaxLastLine = 240

// Progress is what the ranks of a running or ended distributed step
// reported: JSON lines appended to the file named by PIPECTL_METRICS, kept
// as a bounded time series.
type Progress struct {
	// Updated is when the last metric was read.
	Updated time.Time `json:"updated"`
	// Step is the last "step" reported by any rank (nil when none was).
	Step *int64 `json:"step,omitempty"`
	// Last are the last value of every metric (of any rank).
	Last map[string]float64 `json:"last,omitempty"`
	// Points is the series, oldest first: every reported line while there
	// are at most a thousand of them, then an evenly thinned subset of them
	// (the first and the last kept). While a step runs its record holds at
	// most a few hundred of them, evenly spaced (its curves drawn live); the
	// whole series is written when each gang attempt ends.
	Points []MetricPoint `json:"points"`
	// Lines counts the metric lines read; Malformed those skipped (not a
	// JSON object of numbers).
	Lines     int64 `json:"lines"`
	Malformed int64 `json:"malformed,omitempty"`
}

// MetricPoint is one reported metric line.
type MetricPoint struct {
	// Time is when pipectl read the line.
	Time time.Time `json:"t"`
	// Rank is the global rank that reported it; Attempt the gang attempt.
	Rank    int `json:"rank"`
	Attempt int `json:"attempt"`
	// Step is the line's "step", when it has one.
	Step *int64 `json:"step,omitempty"`
	// Values are the line's other numbers ("epoch", "loss", …).
	Values map[string]float64 `json:"values"`
}

// GangKey is the key of a distributed step's gang record on Kubernetes:
// its launcher writes it as gang attempts end (the run record of a
// cluster run is the workflow's, merged with it).
func GangKey(run, step string) string { return run + "/" + step + "/gang.json" }

// StepGang is the gang record of one step, stored at GangKey.
type StepGang struct {
	Run  string `json:"run"`
	Step string `json:"step"`
	// GangAttempts are the step's gang attempts that did not succeed, in
	// order, across the step's retries (StepRecord.GangAttempts).
	GangAttempts []GangAttempt `json:"gangAttempts"`
	// Progress is what the ranks of the step's latest launcher reported
	// (StepRecord.Progress), written as a local run writes it.
	Progress *Progress `json:"progress,omitempty"`
}
