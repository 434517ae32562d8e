package step

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang"
	"pipectl.dev/pipectl/pipeline/inputs"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// PodGracePeriod is the time a pod's program gets between SIGTERM and
// SIGKILL by default; below Kubernetes' default termination grace period
// (30s).
const PodGracePeriod = 20 * time.Second

// Pod is one step run by `pipectl exec` in a step pod, or one node of a
// distributed step in a rank pod (Gang: the launcher looked the step up
// and keeps the ranks' log).
type Pod struct {
	Request *Request
	Store   artifacts.Store
	// WorkDir is the step's work folder (made when missing; a temporary
	// one, removed after, when empty).
	WorkDir string
	Gang    bool
	// KeepLog keeps the step's log at <run>/<step>/step.log (not with Gang).
	KeepLog bool
	// OutputParams is where output parameters are written for Argo.
	OutputParams   string
	Stdout, Stderr io.Writer
	// GracePeriod is the program's time between SIGTERM and SIGKILL.
	GracePeriod time.Duration
	// Getenv reads the rank environment (os.Getenv when nil).
	Getenv func(string) string
	// Started is when the runtime started (when Execute was called, when
	// zero): the first of the times the step's inputs record keeps.
	Started time.Time
}

// Execute runs the step through the step executor. Its messages go to
// Stderr, prefixed "pipectl exec: ".
func (p *Pod) Execute(ctx context.Context) (Result, error) {
	r, stderr, stdout := p.Request, p.Stderr, p.Stdout
	if p.Gang {
		r.Cache = wire.CacheOff // the launcher looks the step up
	}
	work := p.WorkDir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "pipectl-exec-"); err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return Result{}, err
	}
	job := &Job{
		Run: r.Values.Run, Name: r.Name, Image: r.Image, Cache: r.Cache, OutputParams: p.OutputParams,
		KeepCachedLog: true, Lineage: !p.Gang,
		Cached: func(hit stepcache.Entry) {
			fmt.Fprintf(stderr, "pipectl exec: step %s cached: reusing the outputs of step %s of run %s\n", r.Name, hit.Step, hit.Run)
		},
		Warnf: func(format string, args ...any) { fmt.Fprintf(stderr, "pipectl exec: warning: "+format+"\n", args...) },
	}
	if p.KeepLog && !p.Gang {
		var err error
		if job.Log, err = NewLog(work); err != nil {
			return Result{}, err
		}
		defer job.Log.Close()
		stdout, stderr = job.Log.Tee(stdout), job.Log.Tee(stderr)
	}
	req := execution.Request{WorkDir: work, OutputParams: p.OutputParams, Stdout: stdout, Stderr: stderr, GracePeriod: p.GracePeriod, Checkpoint: r.Checkpoint}
	if p.Gang {
		job.Strategy = &Node{Runtime: &execution.Runtime{Store: p.Store}, Request: req, Getenv: p.Getenv}
	} else {
		s := NewProcess(p.Store, work)
		s.Stdout, s.Stderr, s.GracePeriod, s.OutputParams, s.PodName = stdout, stderr, p.GracePeriod, p.OutputParams, req.PodName()
		s.Timing = &record.StepTiming{ExecStarted: p.Started}
		if s.Timing.ExecStarted.IsZero() {
			s.Timing.ExecStarted = time.Now()
		}
		job.Strategy, job.Timing = s, s.Timing
	}
	if skipped, err := p.skip(ctx); err != nil || skipped {
		if err != nil && p.Gang {
			err = &gang.ConfigError{Err: err}
		}
		return Result{Skipped: skipped}, err
	}
	var err error
	if job.Invocation, job.InputSums, err = Invocation(ctx, p.Store, r); err != nil {
		if p.Gang {
			return Result{}, &gang.ConfigError{Err: err}
		}
		if job.Log != nil {
			// The step fails before its program starts (a value that
			// cannot be used, an input that cannot be had): its log says
			// why, as a local run's output does.
			fmt.Fprintf(stderr, "pipectl exec: step %s failed before its program started: %v\n", r.Name, err)
			if uerr := job.Log.Upload(context.WithoutCancel(ctx), p.Store, record.LogKey(r.Values.Run, r.Name)); uerr != nil {
				fmt.Fprintf(p.Stderr, "pipectl exec: warning: cannot store the log of step %s: %v\n", r.Name, uerr)
			}
		}
		return Result{}, err
	}
	job.Invocation.Image = r.Image
	return (&Executor{Store: p.Store}).Execute(ctx, job)
}

// skip reports whether the pod's iteration does not run (plan.Wiring's
// SkipReason: its condition is false, or an upstream iteration it reads
// was skipped). Unless it is a rank of a gang, it then records why in the
// step's outputs record, the record the follower and the steps reading it
// see, and writes each output parameter's file empty (the workflow reads
// them).
func (p *Pod) skip(ctx context.Context) (bool, error) {
	r := p.Request
	reason, err := r.Wiring.SkipReason(r.Values, inputs.Stored(ctx, p.Store, r.Values.Run).Finished)
	if err != nil || reason == "" {
		return false, err
	}
	name := r.Name
	if r.Values.Iteration != nil {
		name = pipeline.IterationName(r.Wiring.Step, *r.Values.Iteration)
	}
	fmt.Fprintf(p.Stderr, "pipectl exec: step %s skipped: %s\n", name, reason)
	if p.Gang {
		return true, nil
	}
	if p.OutputParams != "" {
		var empty []record.OutputRecord
		for _, o := range r.Component.Outputs {
			if !components.IsArtifact(o.Type) {
				empty = append(empty, record.OutputRecord{Name: o.Name, Value: new("")})
			}
		}
		if err := execution.WriteOutputParams(p.OutputParams, empty); err != nil {
			return true, err
		}
	}
	return true, recordstore.WriteStepOutputs(ctx, p.Store, record.StepOutputs{Run: r.Values.Run, Step: name, Skipped: reason})
}
