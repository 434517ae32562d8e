package schedule

import (
	"fmt"
	"time"
)

// Catch-up policies: what a schedule does with the times it missed (the
// scheduler was stopped, the machine asleep).
const (
	// CatchUpAll runs every missed time, oldest first.
	CatchUpAll = "all"
	// CatchUpLatest runs the newest missed time only.
	CatchUpLatest = "latest"
	// CatchUpNone runs no missed time.
	CatchUpNone = "none"
)

// Concurrency policies: what a due time does while a run of the schedule
// is still running.
const (
	// ConcurrencyAllow starts the new run beside it.
	ConcurrencyAllow = "Allow"
	// ConcurrencyForbid skips the time.
	ConcurrencyForbid = "Forbid"
	// ConcurrencyReplace cancels the running run and starts the new one.
	ConcurrencyReplace = "Replace"
)

// DefaultLate is how late a time may be seen and still be on time rather
// than missed (Due).
const DefaultLate = time.Minute

// MaxCatchUp bounds the missed times one Due returns for CatchUpAll; the
// rest are the next call's (and any can be run with a backfill).
const MaxCatchUp = 1000

// Decision is what a scheduler does with the times in (after, now].
type Decision struct {
	// Fire are the times to run, oldest first.
	Fire []time.Time
	// Skipped counts the missed times the catch-up policy does not run.
	Skipped int
	// Cursor is the newest time decided on (fired or skipped): the next
	// Due starts after it. It is after itself when there was none.
	Cursor time.Time
}

// Due decides the times of c in (after, now]: a time at most late before
// now is on time and fires; an older one was missed, and catchUp says
// which of those fire. The result depends on its arguments only.
func Due(c *Cron, after, now time.Time, catchUp string, late time.Duration) (Decision, error) {
	d := Decision{Cursor: after}
	var missed []time.Time
	for t := c.Next(after); !t.IsZero() && !t.After(now); t = c.Next(t) {
		d.Cursor = t
		if now.Sub(t) <= late {
			d.Fire = append(d.Fire, t)
			continue
		}
		switch catchUp {
		case CatchUpAll:
			if len(missed) == MaxCatchUp {
				d.Cursor = missed[len(missed)-1]
				return Decision{Fire: missed, Cursor: d.Cursor}, nil
			}
			missed = append(missed, t)
		case CatchUpLatest:
			if len(missed) > 0 {
				d.Skipped++
			}
			missed = append(missed[:0], t)
		case CatchUpNone:
			d.Skipped++
		default:
			return Decision{}, fmt.Errorf("unknown catch-up policy %q (want all, latest or none)", catchUp)
		}
	}
	d.Fire = append(missed, d.Fire...)
	return d, nil
}
