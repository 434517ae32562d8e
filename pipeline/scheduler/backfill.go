package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// MaxBackfill is the most times a backfill runs without Yes.
const MaxBackfill = 10000

// Backfill runs every time of a schedule in [From, To) that has no run yet.
type Backfill struct {
	Store artifacts.Store
	Run   RunFunc
	// Status receives the progress, a line a run, and the summary.
	Status io.Writer
	// Parallelism is how many runs run at once (default 1).
	Parallelism int
	// Yes allows a range of more than MaxBackfill times.
	Yes bool
	// Now is the clock of the claims (default time.Now).
	Now func() time.Time
	// Schedule, when set, is the schedule (else Fill reads it from Store).
	Schedule *schedule.Schedule
	// Ran, when set, says which of times have a run already (keys
	// schedulestore.Stamp; default: the store's claims).
	Ran func(ctx context.Context, s *schedule.Schedule, times []time.Time) (map[string]bool, error)
	// Claim, when set, claims time at for a run and returns the run's id:
	// schedulestore.ErrClaimed when it has one (default: a claim in the
	// store, the id local.NewRunID's).
	Claim func(ctx context.Context, s *schedule.Schedule, at time.Time) (string, error)
}

// Summary is what a backfill did.
type Summary struct {
	Schedule string `json:"schedule"`
	// From and To are the range, [From, To), in RFC 3339.
	From string `json:"from"`
	To   string `json:"to"`
	// Times is the number of the schedule's times in the range; HadRun
	// those that had a run already.
	Times  int `json:"times"`
	HadRun int `json:"hadRun"`
	// Runs are the runs the backfill started, oldest time first.
	Runs []BackfillRun `json:"runs"`
	// Succeeded, Failed and NotRun count the times to run by outcome
	// (NotRun: cancelled before they started).
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	NotRun    int `json:"notRun"`
}

// BackfillRun is one run of a backfill.
type BackfillRun struct {
	Time   string `json:"time"`
	Run    string `json:"run"`
	Status string `json:"status"`
}

// Fill runs the times of schedule name in [from, to) that have no run yet,
// oldest first, Parallelism at once. It stops starting runs when ctx ends
// and returns once the started ones ended.
func (b *Backfill) Fill(ctx context.Context, name string, from, to time.Time) (*Summary, error) {
	s := b.Schedule
	if s == nil {
		var err error
		if s, err = schedulestore.Get(ctx, b.Store, name); err != nil {
			return nil, err
		}
	}
	c, err := s.CronOf()
	if err != nil {
		return nil, err
	}
	if !from.Before(to) {
		return nil, fmt.Errorf("--from %s is not before --to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if n := c.Count(from, to, MaxBackfill); n > MaxBackfill && !b.Yes {
		return nil, fmt.Errorf("the range [%s, %s) holds more than %d times of schedule %s (cron %q): nothing was run; give --yes to run them all, or a shorter range", from.Format(time.RFC3339), to.Format(time.RFC3339), MaxBackfill, name, s.Cron)
	}
	sum := &Summary{Schedule: name, From: schedule.FormatTime(from.In(c.Location())), To: schedule.FormatTime(to.In(c.Location()))}
	var times, todo []time.Time
	for t := c.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = c.Next(t) {
		times = append(times, t)
	}
	claimed, err := b.ran(ctx, s, times)
	if err != nil {
		return nil, err
	}
	for _, t := range times {
		sum.Times++
		if claimed[schedulestore.Stamp(t)] {
			sum.HadRun++
			continue
		}
		todo = append(todo, t)
	}
	b.statusf("Backfill of schedule %s, [%s, %s): %d time(s), %d with a run already, %d to run (%d at once)\n", name, sum.From, sum.To, sum.Times, sum.HadRun, len(todo), cmp.Or(b.Parallelism, 1))
	b.runAll(ctx, s, todo, sum)
	b.statusf("Backfill of schedule %s: %d run(s) started: %d succeeded, %d failed; %d not run; %d had a run already\n", name, len(sum.Runs), sum.Succeeded, sum.Failed, sum.NotRun, sum.HadRun)
	if sum.Failed > 0 || sum.NotRun > 0 {
		return sum, fmt.Errorf("backfill of schedule %s: %d failed, %d not run", name, sum.Failed, sum.NotRun)
	}
	return sum, nil
}

// runAll runs the times, oldest first, Parallelism at once.
func (b *Backfill) runAll(ctx context.Context, s *schedule.Schedule, todo []time.Time, sum *Summary) {
	sem := make(chan struct{}, max(b.Parallelism, 1))
	var mu sync.Mutex
	var wg sync.WaitGroup
	runs := make([]*BackfillRun, len(todo))
	done := 0
	for i, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			mu.Lock()
			sum.NotRun += len(todo) - i
			mu.Unlock()
			break
		}
		at := schedule.FormatTime(t)
		id, err := b.claim(ctx, s, t)
		if err != nil {
			<-sem
			mu.Lock()
			if errors.Is(err, schedulestore.ErrClaimed) {
				sum.HadRun++ // claimed meanwhile (serve, another backfill)
			} else {
				sum.NotRun++
				b.statusf("%s: not run: %v\n", at, err)
			}
			mu.Unlock()
			continue
		}
		runs[i] = &BackfillRun{Time: at, Run: id}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rec, err := b.Run(ctx, s, t, id)
			status := outcome(rec, err)
			mu.Lock()
			defer mu.Unlock()
			runs[i].Status = status
			done++
			if status == record.StatusSucceeded {
				sum.Succeeded++
			} else {
				sum.Failed++
			}
			b.statusf("[%d/%d] %s: run %s %s\n", done, len(todo), at, id, status)
		}()
	}
	wg.Wait()
	for _, r := range runs {
		if r != nil {
			sum.Runs = append(sum.Runs, *r)
		}
	}
}

// ran is Ran, or the store's claims.
func (b *Backfill) ran(ctx context.Context, s *schedule.Schedule, times []time.Time) (map[string]bool, error) {
	if b.Ran != nil {
		return b.Ran(ctx, s, times)
	}
	return schedulestore.Claimed(ctx, b.Store, s.Name)
}

// claim is Claim, or a claim in the store for a local run.
func (b *Backfill) claim(ctx context.Context, s *schedule.Schedule, t time.Time) (string, error) {
	if b.Claim != nil {
		return b.Claim(ctx, s, t)
	}
	id := local.NewRunID(s.Name, t)
	claim := schedulestore.Claim{Schedule: s.Name, Time: schedule.FormatTime(t), Run: id, By: "backfill", Claimed: b.now()}
	return id, schedulestore.CreateClaim(ctx, b.Store, t, claim)
}

func (b *Backfill) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func (b *Backfill) statusf(format string, args ...any) {
	if b.Status != nil {
		fmt.Fprintf(b.Status, format, args...)
	}
}
