package checkpoint

import (
	"cmp"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// Options are how a step's checkpoints are kept (its
// distributed.checkpoint) and where a rerun resumes from: the same for a
// local gang and for the JobSet's rank pods.
type Options struct {
	// Keep is how many generations stay in the store (DefaultKeep when 0).
	Keep int
	// Every is how often a running gang's directory is synced
	// (DefaultEvery when 0); it is also synced when the ranks exit.
	Every time.Duration
	// From is the run a rerun resumes from ("": none).
	From string
}

// Interval is Every, or DefaultEvery when it is not set.
func (o Options) Interval() time.Duration { return cmp.Or(o.Every, DefaultEvery) }

// Keeper is the keeper of the checkpoint directory dir of step in run.
func (o Options) Keeper(store artifacts.Store, run, step, dir string) *Keeper {
	return &Keeper{Store: store, Run: run, Step: step, From: o.From, Dir: dir, Keep: o.Keep}
}
