package logs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// FollowEvery is how often `pipectl logs -f` reads the run's record and
// its steps' logs again.
var FollowEvery = time.Second

// followRun prints the logs of run opts.RunID (of step opts.Step) as they
// grow: each poll prints the complete lines a step's log gained, and the
// rest once the step has ended; it returns when the run has ended (a run
// whose local runner died counts as ended: its record says Failed).
func followRun(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	runs, r, err := openRun(ctx, opts)
	if err != nil {
		return err
	}
	f := &follower{opts: opts, store: runs.Store(), printed: map[string]int64{}}
	for {
		ended := r.Finished != nil || r.Status != record.StatusRunning && r.Status != record.StatusPending
		for _, s := range r.Steps {
			if opts.Step == "" || s.Name == opts.Step {
				if err := f.step(ctx, r.ID, s, ended || s.Status != record.StatusRunning && s.Status != record.StatusPending); err != nil {
					return err
				}
			}
		}
		if ended {
			return f.end(r)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(FollowEvery):
		}
		if r, err = runs.Get(ctx, r.ID); err != nil {
			return err
		}
	}
}

// follower remembers how much of each step's log it printed.
type follower struct {
	opts    *Options
	store   artifacts.Store
	printed map[string]int64
}

// step prints what step s's log gained since the last call: its complete
// lines, or everything when done.
func (f *follower) step(ctx context.Context, run string, s record.StepRecord, done bool) error {
	off := f.printed[s.Name]
	rc, err := artifacts.GetRange(ctx, f.store, record.LogKey(run, s.Name), off, -1)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil // not started, or no line yet
	}
	if err != nil {
		return err
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	if !done {
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	if _, err := f.opts.IO.Out.Write(b); err != nil {
		return err
	}
	f.printed[s.Name] = off + int64(len(b))
	return nil
}

// end says how run r ended, on stderr, as `pipectl run` does.
func (f *follower) end(r *record.Run) error {
	msg := ""
	if r.Message != "" {
		msg = ": " + r.Message
	}
	fmt.Fprintf(f.opts.IO.ErrOut, "Run %s %s%s\n", r.ID, strings.ToLower(r.Status), msg)
	return nil
}
