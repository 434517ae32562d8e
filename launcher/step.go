package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Step runs one distributed step (or iteration) as its JobSet: the
// strategy of `pipectl launch` for the step executor (pipeline/step). It
// clears the step's outputs record, runs the JobSet to its end with
// Launcher, and collects what rank 0 published.
type Step struct {
	Launcher *Launcher
	Store    artifacts.Store
	// RunID and Name are the run and the step's name in its record.
	RunID, Name string
	// Launch is the step's launch plan; JobSet and PodGroup (nil without
	// one) are built from it (jobset.BuildJobSet).
	Launch   *plan.Launch
	JobSet   *jobsetv1alpha2.JobSet
	PodGroup *unstructured.Unstructured
	// Secret is an mpi step's (nil for another framework): created with a
	// new key pair before the JobSet, deleted after it.
	Secret *corev1.Secret
	// Outputs are the component's declared outputs, OutputParams where
	// their parameter values are written for Argo.
	Outputs      []components.ProgramIO
	OutputParams string
	// Log receives the launcher's own lines; Done is told the outputs.
	Log  io.Writer
	Done func([]record.OutputRecord)

	// TerminalAt is when the launcher saw the JobSet end (zero if it did not).
	TerminalAt time.Time

	gangMu sync.Mutex // serialises the writes of the step's gang record
}

// Run runs the step's JobSet once (the JobSet restarts the gang itself).
func (s *Step) Run(ctx context.Context, _ *components.Invocation) ([]record.OutputRecord, int, error) {
	// A record left by an earlier attempt must not stand for this one's.
	if err := s.Store.Delete(ctx, record.OutputsKey(s.RunID, s.Name)); err != nil {
		return nil, 0, fmt.Errorf("clear the step's outputs record: %w", err)
	}
	nodes, procs := max(s.Launch.Nodes, 1), max(s.Launch.ProcsPerNode, 1)
	fmt.Fprintf(s.Log, "pipectl launch: step %s of run %s: %d node(s) × %d process(es) per node\n", s.Name, s.RunID, nodes, procs)
	l := *s.Launcher
	l.StartupTimeout = StartupTimeout(s.Launch)
	l.StallTimeout = s.Launch.StallTimeout.Duration
	l.Ended = s.recordAttempts(ctx)
	l.Progress = s.recordProgress(ctx)
	if s.Secret != nil {
		if err := l.createMPISecret(ctx, s.Secret); err != nil {
			return nil, 1, err
		}
		if !l.Keep {
			defer l.deleteSecret(context.WithoutCancel(ctx), s.Secret)
		}
	}
	res, err := l.Run(ctx, s.JobSet, s.PodGroup, nodes, procs)
	s.TerminalAt = s.timings(res, err)
	if err != nil {
		return nil, 1, err
	}
	records, err := CollectOutputs(ctx, s.Store, s.RunID, s.Name, s.Outputs, s.OutputParams)
	if err == nil && s.Done != nil {
		s.Done(records)
	}
	return records, 1, err
}

// recordAttempts returns the Launcher's Ended: each gang attempt that
// did not succeed goes to the step's gang record (numbered after those of
// the step's earlier retries), which the run record shows.
func (s *Step) recordAttempts(ctx context.Context) func(record.GangAttempt) {
	prior, err := recordstore.ReadGang(ctx, s.Store, s.RunID, s.Name)
	if err != nil {
		fmt.Fprintf(s.Log, "pipectl launch: warning: read the step's gang record: %v\n", err)
	}
	before := len(prior.GangAttempts)
	return func(a record.GangAttempt) {
		s.gangMu.Lock()
		defer s.gangMu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := recordstore.AddGangAttempt(ctx, s.Store, s.RunID, s.Name, a, before); err != nil {
			fmt.Fprintf(s.Log, "pipectl launch: warning: record gang attempt %d: %v\n", a.Attempt+before, err)
		}
	}
}

// recordProgress returns the Launcher's Progress: the ranks' metrics
// series goes to the step's gang record, which the run record shows as a
// local run's (StepRecord.Progress).
func (s *Step) recordProgress(ctx context.Context) func(record.Progress) {
	warned := false
	return func(p record.Progress) {
		s.gangMu.Lock()
		defer s.gangMu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := recordstore.SetGangProgress(ctx, s.Store, s.RunID, s.Name, p); err != nil && !warned {
			fmt.Fprintf(s.Log, "pipectl launch: warning: record the ranks' metrics: %v\n", err)
			warned = true
		}
	}
}

// timings logs the launch-to-pods-created timing of a run (for
// benchmarks) and returns when the launcher saw the JobSet terminal.
func (s *Step) timings(res *Result, err error) time.Time {
	var fe *FailedError
	if res == nil && errors.As(err, &fe) {
		res = &fe.Result
	}
	if res == nil {
		return time.Time{}
	}
	if res.PodsCreated > 0 {
		fmt.Fprintf(s.Log, "pipectl launch: timing launch-to-pods-created=%s\n", res.PodsCreated)
	}
	return res.Terminal
}

// StartupTimeout is the plan's, or without a gang scheduler the default.
func StartupTimeout(ls *plan.Launch) time.Duration {
	if ls.StartupTimeout.Duration > 0 {
		return ls.StartupTimeout.Duration
	}
	if g := ls.Gang; g != nil && (g.KueueQueue != "" || g.PodGroupScheduler != "") {
		// The gang scheduler admits all ranks or none; queueing may be long.
		return 0
	}
	return DefaultStartupTimeout
}
