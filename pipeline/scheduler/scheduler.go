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
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// RunFunc runs schedule s's pipeline for its time at as run id, and
// returns when the run ended (its record, and its error).
type RunFunc func(ctx context.Context, s *schedule.Schedule, at time.Time, id string) (*record.Run, error)

// Local is the RunFunc of local runs: the schedule's pipeline file, loaded
// when the time comes, run by the Runner newRunner returns (its Store,
// logs and settings), with the schedule's params for that time.
func Local(newRunner func() *local.Runner) RunFunc {
	return func(ctx context.Context, s *schedule.Schedule, at time.Time, id string) (*record.Run, error) {
		p, err := pipeline.Load(s.Pipeline)
		if err != nil {
			return nil, err
		}
		params, err := p.ResolveParams(s.RunParams(at))
		if err != nil {
			return nil, fmt.Errorf("schedule %s: params: %w", s.Name, err)
		}
		r := newRunner()
		r.RunID, r.Schedule, r.ScheduledTime = id, s.Name, schedule.FormatTime(at)
		return r.Run(ctx, p, params)
	}
}

// Scheduler fires the schedules of a store.
type Scheduler struct {
	Store artifacts.Store
	// Run runs one scheduled time.
	Run RunFunc
	// Status receives what the scheduler does, a line each.
	Status io.Writer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Late is how late a time may be seen and still run as on time
	// (default schedule.DefaultLate); older ones are missed.
	Late time.Duration
	// Poll is how often Serve reads the schedules again (default 10s).
	Poll time.Duration

	mu     sync.Mutex
	active map[string]map[string]*active // schedule → run id → run
	wg     sync.WaitGroup
}

// active is a run the scheduler started.
type active struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (sc *Scheduler) now() time.Time {
	if sc.Now != nil {
		return sc.Now()
	}
	return time.Now()
}

func (sc *Scheduler) statusf(format string, args ...any) {
	if sc.Status != nil {
		fmt.Fprintf(sc.Status, format, args...)
	}
}

// Serve fires what is due until ctx ends, then waits for the runs it
// started (cancelled with ctx) to end.
func (sc *Scheduler) Serve(ctx context.Context) error {
	defer sc.wg.Wait()
	poll := cmp.Or(sc.Poll, 10*time.Second)
	for {
		next, err := sc.Once(ctx)
		if err != nil && ctx.Err() == nil {
			sc.statusf("Warning: %v\n", err)
		}
		wait := poll
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(sc.now()), 10*time.Millisecond))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

// Once decides and starts what is due now for every schedule of the store
// and returns the next time one is due (zero when none is). The runs it
// starts go on after it returns; Wait waits for them.
func (sc *Scheduler) Once(ctx context.Context) (time.Time, error) {
	list, err := schedulestore.List(ctx, sc.Store, sc.Status)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	var errs []error
	for _, s := range list {
		if s.Suspended {
			continue
		}
		n, err := sc.decide(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", s.Name, err))
			continue
		}
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, errors.Join(errs...)
}

// Wait waits for every run the scheduler started to end.
func (sc *Scheduler) Wait() { sc.wg.Wait() }

// decide fires s's due times and returns its next time.
func (sc *Scheduler) decide(ctx context.Context, s *schedule.Schedule) (time.Time, error) {
	c, err := s.CronOf()
	if err != nil {
		return time.Time{}, err
	}
	cursor, err := schedulestore.Cursor(ctx, sc.Store, s.Name)
	if err != nil {
		return time.Time{}, err
	}
	if cursor.Before(s.Created) {
		cursor = s.Created // times before the schedule existed are a backfill's
	}
	d, err := schedule.Due(c, cursor, sc.now(), s.CatchUp, cmp.Or(sc.Late, schedule.DefaultLate))
	if err != nil {
		return time.Time{}, err
	}
	if d.Skipped > 0 {
		sc.statusf("Schedule %s: %d missed time(s) not run (catch-up %s; 'pipectl schedule backfill %s' runs them)\n", s.Name, d.Skipped, s.CatchUp, s.Name)
	}
	for _, t := range d.Fire {
		if err := sc.fire(ctx, s, t); err != nil {
			return time.Time{}, err
		}
		if err := schedulestore.SetCursor(ctx, sc.Store, s.Name, t); err != nil {
			return time.Time{}, err
		}
	}
	if d.Cursor.After(cursor) {
		if err := schedulestore.SetCursor(ctx, sc.Store, s.Name, d.Cursor); err != nil {
			return time.Time{}, err
		}
	}
	return c.Next(d.Cursor), nil
}

// fire starts the run of s for time t under s's concurrency policy.
func (sc *Scheduler) fire(ctx context.Context, s *schedule.Schedule, t time.Time) error {
	at := schedule.FormatTime(t)
	running := sc.running(s.Name)
	switch {
	case len(running) > 0 && s.Concurrency == schedule.ConcurrencyForbid:
		sc.statusf("Schedule %s: %s skipped: a run of it is still running (concurrency Forbid)\n", s.Name, at)
		return nil
	case len(running) > 0 && s.Concurrency == schedule.ConcurrencyReplace:
		sc.statusf("Schedule %s: %s replaces the running run(s) (concurrency Replace)\n", s.Name, at)
		for _, a := range running {
			a.cancel()
		}
		for _, a := range running {
			select {
			case <-a.done:
			case <-ctx.Done():
				return nil
			}
		}
	}
	return sc.start(ctx, s, t, "serve")
}

// start claims time t of s and starts its run.
func (sc *Scheduler) start(ctx context.Context, s *schedule.Schedule, t time.Time, by string) error {
	id := local.NewRunID(s.Name, t)
	claim := schedulestore.Claim{Schedule: s.Name, Time: schedule.FormatTime(t), Run: id, By: by, Claimed: sc.now()}
	if err := schedulestore.CreateClaim(ctx, sc.Store, t, claim); err != nil {
		if errors.Is(err, schedulestore.ErrClaimed) {
			sc.statusf("Schedule %s: %s ran already\n", s.Name, claim.Time)
			return nil
		}
		return fmt.Errorf("claim %s: %w", claim.Time, err)
	}
	sc.statusf("Schedule %s: %s: run %s started\n", s.Name, claim.Time, id)
	rctx, cancel := context.WithCancel(ctx)
	a := &active{cancel: cancel, done: make(chan struct{})}
	sc.mu.Lock()
	if sc.active == nil {
		sc.active = map[string]map[string]*active{}
	}
	if sc.active[s.Name] == nil {
		sc.active[s.Name] = map[string]*active{}
	}
	sc.active[s.Name][id] = a
	sc.mu.Unlock()
	sc.wg.Add(1)
	go func() {
		defer sc.wg.Done()
		defer close(a.done)
		defer cancel()
		rec, err := sc.Run(rctx, s, t, id)
		sc.mu.Lock()
		delete(sc.active[s.Name], id)
		sc.mu.Unlock()
		sc.statusf("Schedule %s: %s: run %s %s\n", s.Name, claim.Time, id, outcome(rec, err))
	}()
	return nil
}

// running lists the runs of schedule name the scheduler started that run.
func (sc *Scheduler) running(name string) []*active {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []*active
	for _, a := range sc.active[name] {
		out = append(out, a)
	}
	return out
}

// outcome says how a run ended.
func outcome(rec *record.Run, err error) string {
	var rerr *local.RunError
	switch {
	case rec != nil:
		return rec.Status
	case errors.As(err, &rerr):
		return rerr.Run.Status
	case err != nil:
		return "failed to start: " + err.Error()
	}
	return record.StatusSucceeded
}
