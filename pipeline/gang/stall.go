package gang

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// StallError says a gang attempt was stopped because no rank made progress
// (printed a line, reported a metric) for Timeout; Ranks is each rank's
// state then.
type StallError struct {
	Timeout time.Duration
	Ranks   []record.RankState
}

// maxRanksNamed bounds the ranks a StallError's message (and the log) names.
const maxRanksNamed = 8

func (e *StallError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stalled: no rank made progress for %s", e.Timeout)
	ranks := slices.Clone(e.Ranks)
	// The longest idle first: the likeliest culprits.
	slices.SortStableFunc(ranks, func(a, b record.RankState) int { return compareIdle(b, a) })
	for i, r := range ranks {
		if i == maxRanksNamed {
			fmt.Fprintf(&b, "; and %d more rank(s)", len(ranks)-i)
			break
		}
		fmt.Fprintf(&b, "; %s", r)
	}
	return b.String()
}

func compareIdle(a, b record.RankState) int {
	da, _ := time.ParseDuration(a.Idle)
	db, _ := time.ParseDuration(b.Idle)
	return int(da - db)
}

// AttemptRecord is the record of a gang attempt that ended with err.
func AttemptRecord(attempt int, err error, restarted bool) record.GangAttempt {
	a := record.GangAttempt{Attempt: attempt, Reason: record.ReasonFailed, Message: err.Error(), Restarted: restarted}
	var se *StallError
	if errors.As(err, &se) {
		a.Reason, a.Ranks = record.ReasonStalled, se.Ranks
	}
	return a
}

// watch follows a gang attempt until done is closed: it reads the ranks'
// metrics files every interval, hands the series' summary to progress when
// it changed (at most every progress.PublishInterval: each is a record write) and
// the whole series once at the end, and, with
// a stall timeout, sends a *StallError on the returned channel when no
// rank made progress for that long. wait returns once it ended.
type watch struct {
	tr       *progress.Tracker
	files    *progress.Files
	timeout  time.Duration
	progress func(record.Progress)
	stalled  chan error
	done     chan struct{}
	wg       sync.WaitGroup
}

func startWatch(ctx context.Context, tr *progress.Tracker, files *progress.Files, timeout time.Duration, progressf func(record.Progress)) *watch {
	w := &watch{tr: tr, files: files, timeout: timeout, progress: progressf, stalled: make(chan error, 1), done: make(chan struct{})}
	w.wg.Add(1)
	go w.run(ctx)
	return w
}

// Stalled is the decision of both backends (a local gang, the JobSet's
// launcher): the *StallError of the gang tr follows when no rank made
// progress for timeout, else nil (always nil without a timeout).
func Stalled(tr *progress.Tracker, timeout time.Duration) *StallError {
	if timeout <= 0 || tr.Idle() < timeout {
		return nil
	}
	return &StallError{Timeout: timeout, Ranks: tr.Ranks()}
}

// LogStall says in a gang's log that attempt stalled, naming the ranks
// (at most maxRanksNamed of them), as both backends say it.
func LogStall(logf func(format string, args ...any), attempt int, se *StallError) {
	logf("gang attempt %d stalled: no rank made progress for %s; every rank stopped", attempt, se.Timeout)
	for i, r := range se.Ranks {
		if i == maxRanksNamed {
			logf("  and %d more rank(s)", len(se.Ranks)-i)
			break
		}
		logf("  %s", r)
	}
}

// PollInterval is how often a gang is looked at: a tenth of its stall
// timeout, between 100ms and 1s.
func PollInterval(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return time.Second
	}
	return min(max(timeout/10, 100*time.Millisecond), time.Second)
}

func (w *watch) run(ctx context.Context) {
	defer w.wg.Done()
	tick := time.NewTicker(PollInterval(w.timeout))
	defer tick.Stop()
	pub := &progress.Publisher{Tracker: w.tr, Publish: w.progress}
	defer pub.End()
	for {
		select {
		case <-w.done:
			_ = w.files.Poll(w.tr)
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = w.files.Poll(w.tr)
			pub.Live()
			if se := Stalled(w.tr, w.timeout); se != nil {
				w.stalled <- se
				return
			}
		}
	}
}

// stop ends the watch after a last read of the metrics files.
func (w *watch) stop() {
	close(w.done)
	w.wg.Wait()
}
