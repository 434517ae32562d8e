package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/launcher/gang"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// logTail is how many log lines of a failed step the summary shows.
const logTail = 15

// runStep runs one step to its end and records it: its when, then its
// one execution or, for a loop step, its iterations.
func (e *execution) runStep(ctx context.Context, s *pipeline.Step) {
	start := e.r.now()
	e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Started = &start })
	sp, err := plan.Build(e.p, s.Name)
	if err != nil {
		e.fail(ctx, s.Name, 1, "%v", err)
		return
	}
	if sp.When != nil {
		ok, err := sp.When.Eval(plan.Values{Params: e.params}, e.outputValue)
		if err != nil {
			e.fail(ctx, s.Name, 1, "when: %v", err)
			return
		}
		if !ok {
			e.finish(ctx, s.Name, artifacts.StatusSkipped, nil, fmt.Sprintf("condition %q is false", sp.When.Source))
			e.r.statusf("%-12s skipped: condition %q is false\n", s.Name, sp.When.Source)
			return
		}
	}
	v, sums, err := e.values(sp)
	if err != nil {
		e.fail(ctx, s.Name, 1, "%v", err)
		return
	}
	if sp.Loop != nil {
		e.runLoop(ctx, sp, v, sums)
		return
	}
	e.execute(ctx, sp, s.Name, v, sums)
}

// fail records a step's failure and reports it; a step that fails
// because the run was cancelled (a fingerprint cut short) is Cancelled.
func (e *execution) fail(ctx context.Context, step string, code int, format string, args ...any) {
	if ctx.Err() != nil {
		e.finish(ctx, step, artifacts.StatusCancelled, nil, "run cancelled")
		e.r.statusf("%-12s cancelled\n", step)
		return
	}
	msg := fmt.Sprintf(format, args...)
	e.finish(ctx, step, artifacts.StatusFailed, &code, msg)
	e.r.statusf("%-12s failed: %s\n", step, msg)
}

// execute runs one execution of a step (the step, or one iteration of a
// loop step) named name, with values v, and records it: the cache, the
// attempts, the log and the outputs.
func (e *execution) execute(ctx context.Context, sp *plan.Step, name string, v plan.Values, inputSums map[string]string) {
	start := e.r.now()
	e.update(ctx, name, func(r *artifacts.StepRecord) { r.Status, r.Started = artifacts.StatusRunning, &start })
	fail := func(code int, format string, args ...any) { e.fail(ctx, name, code, format, args...) }
	c, err := sp.Component.Resolve(nil)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	// The image is part of the step's fingerprint.
	c.Image = sp.Image
	inv, err := sp.Wiring.Invocation(c, e.r.Store, v)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	var shape stepcache.Shape
	if d := sp.Distributed; d != nil {
		shape = stepcache.Shape{Nodes: d.Nodes, Procs: d.LocalProcsPerNode}
	}
	fp, err := stepcache.Fingerprint(ctx, inv, inputSums, shape)
	if err != nil {
		fail(1, "fingerprint: %v", err)
		return
	}
	e.update(ctx, name, func(r *artifacts.StepRecord) { r.Fingerprint = fp })
	if !e.r.NoCache && sp.Cache {
		if hit, ok := stepcache.Lookup(ctx, e.r.Store, fp); ok {
			end := e.r.now()
			code := 0
			e.update(ctx, name, func(r *artifacts.StepRecord) {
				r.Status, r.Cached, r.CachedFrom, r.Outputs, r.Finished, r.ExitCode = artifacts.StatusSucceeded, true, hit.Run, hit.Outputs, &end, &code
				r.Message = "outputs reused from run " + hit.Run
			})
			e.r.statusf("%-12s cached: reusing the outputs of step %s of run %s\n", name, hit.Step, hit.Run)
			if err := stepcache.Reuse(ctx, e.r.Store, e.run.ID, inv.Step, "", hit); err != nil {
				e.r.statusf("warning: cannot write the outputs record of step %s: %v\n", name, err)
			}
			return
		}
	}

	dir := e.workDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(1, "%v", err)
		return
	}
	logFile, err := os.Create(filepath.Join(dir, "step.log"))
	if err != nil {
		fail(1, "%v", err)
		return
	}
	t := components.NewTail(logTail)
	e.mu.Lock()
	e.tails[name] = t
	e.mu.Unlock()
	var writers []*components.LineWriter
	output := func(prefix string) io.Writer {
		w := components.NewLineWriter(&e.logMu, prefix, t, logFile, e.r.Logs)
		writers = append(writers, w)
		return w
	}
	stepLog := output("[" + name + "] ")

	stopCopy := copyLogWhileRunning(ctx, e.r.Store, e.run.ID, name, logFile.Name())
	attempts, records, runErr := e.attempts(ctx, sp, inv, components.Workspace{Dir: dir}, output, stepLog)
	stopCopy()
	for _, w := range writers {
		w.Flush()
	}
	logFile.Close()
	if err := uploadLog(context.WithoutCancel(ctx), e.r.Store, e.run.ID, name, logFile.Name()); err != nil {
		e.r.statusf("warning: cannot store the log of step %s: %v\n", name, err)
	}
	e.update(ctx, name, func(r *artifacts.StepRecord) { r.Attempts = attempts })
	code := components.ExitCode(runErr)
	var pe *components.PublishError
	var mo *components.MissingOutputError
	if errors.As(runErr, &pe) || errors.As(runErr, &mo) {
		code = 0 // the program's: the step failed after it
	}
	took := e.r.now().Sub(start).Round(time.Millisecond)
	switch {
	case runErr == nil:
		e.update(ctx, name, func(r *artifacts.StepRecord) { r.Outputs = records })
		e.finish(ctx, name, artifacts.StatusSucceeded, &code, "")
		if v.Iteration == nil {
			e.r.statusf("%-12s succeeded in %s\n", name, took)
		}
		if sp.Cache {
			if err := stepcache.Record(context.WithoutCancel(ctx), e.r.Store, fp, stepcache.Entry{Run: e.run.ID, Step: name, Outputs: records}); err != nil {
				e.r.statusf("warning: cannot write the cache entry of step %s: %v\n", name, err)
			}
		}
	case ctx.Err() != nil:
		e.finish(ctx, name, artifacts.StatusCancelled, nil, "run cancelled")
		e.r.statusf("%-12s cancelled\n", name)
	default:
		fail(code, "%v", runErr)
	}
}

// attempts runs the step up to 1+retries times; a distributed step's gang
// restarts happen within one attempt.
func (e *execution) attempts(ctx context.Context, sp *plan.Step, inv *components.Invocation, ws components.Workspace, output func(string) io.Writer, stepLog io.Writer) (int, []artifacts.OutputRecord, error) {
	rt := &components.Runtime{Store: e.r.Store}
	values, err := rt.Prepare(ctx, inv, ws)
	if err != nil {
		return 0, nil, err
	}
	env := inv.Environ(nil)
	timeout := time.Duration(sp.Timeout)
	total := 0
	var lastErr error
	for try := 0; try <= sp.Retries; try++ {
		if try > 0 {
			fmt.Fprintf(stepLog, "pipectl: attempt %d failed (%v); retrying (%d of %d)\n", try, lastErr, try, sp.Retries)
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		n, records, err := e.attempt(actx, sp, inv, rt, ws, values, env, output, stepLog)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		total += n
		if err == nil {
			return total, records, nil
		}
		if ctx.Err() != nil {
			return total, nil, ctx.Err()
		}
		if timedOut {
			err = fmt.Errorf("timed out after %s: %w", timeout, &components.ExitError{Code: 124})
		}
		lastErr = err
	}
	return total, nil, lastErr
}

// attempt runs the step's program once and publishes its outputs: one
// process, or the gang of a distributed step (with its own restarts). It
// returns the number of gang attempts made.
func (e *execution) attempt(ctx context.Context, sp *plan.Step, inv *components.Invocation, rt *components.Runtime, ws components.Workspace, values components.Values, env []string, output func(string) io.Writer, stepLog io.Writer) (int, []artifacts.OutputRecord, error) {
	dir := inv.Component.RunDir()
	d := sp.Distributed
	if d == nil {
		records, err := rt.RunOnce(ctx, inv, ws, values, components.ExecOptions{Dir: dir, Env: env, Stdout: stepLog, Stderr: stepLog, GracePeriod: e.r.GracePeriod})
		return 1, records, err
	}
	argvFor := func(rank int) ([]string, []string, error) {
		v, err := rt.ForRank(inv, ws, values, rank)
		if err != nil {
			return nil, nil, err
		}
		argv, err := inv.Component.Argv(v)
		if err != nil {
			return nil, nil, err
		}
		cenv, err := inv.Component.Environ(v)
		return argv, cenv, err
	}
	procs := d.LocalProcsPerNode
	// The component env is resolved for rank 0; per-rank output paths in
	// env values would all name rank 0's, which only rank 0 publishes anyway.
	_, cenv, err := argvFor(0)
	if err != nil {
		return 0, nil, err
	}
	outs := map[int]io.Writer{}
	g := &gang.Gang{
		Nodes: d.Nodes, ProcsPerNode: procs, MaxRestarts: d.MaxRestarts,
		Dir: dir, GracePeriod: e.r.GracePeriod,
		Argv: func(node, local int) ([]string, error) {
			argv, _, err := argvFor(node*procs + max(local, 0))
			return argv, err
		},
		Output: func(rank int) io.Writer {
			if w, ok := outs[rank]; ok {
				return w
			}
			outs[rank] = output(fmt.Sprintf("[%s rank %d] ", inv.Step, rank))
			return outs[rank]
		},
		Logf: func(format string, args ...any) { fmt.Fprintf(stepLog, "pipectl: "+format+"\n", args...) },
	}
	g.Env = append(append([]string{}, env...), cenv...)
	fmt.Fprintf(stepLog, "pipectl: starting %d rank(s): %d node(s) × %d process(es) per node\n", d.Nodes*procs, d.Nodes, procs)
	n, err := g.Run(ctx)
	if err != nil {
		return n, nil, err
	}
	records, err := rt.Publish(ctx, inv, ws)
	return n, records, err
}

// values are the run-time values of the step's plan: parameters, upstream
// output parameters, the recorded URIs of input artifacts, the collected
// outputs of loop steps and, for a finally step, the run's outcome. sums
// are the sha256 of the input artifacts, for the fingerprint.
func (e *execution) values(sp *plan.Step) (plan.Values, map[string]string, error) {
	v := plan.Values{Run: e.run.ID, Params: e.params, Upstream: map[string]string{}, Artifacts: map[string]string{}, Collected: map[string][]artifacts.OutputRecord{}}
	sums := map[string]string{}
	for _, name := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[name]
		val, err := e.outputValue(ref)
		if err != nil {
			return v, nil, fmt.Errorf("input %q: %v", name, err)
		}
		v.Upstream[name] = val
	}
	for _, name := range slices.Sorted(maps.Keys(sp.Wiring.Inputs)) {
		ref := sp.Wiring.Inputs[name]
		out, ok := e.output(ref.Step, ref.Output)
		if !ok {
			return v, nil, fmt.Errorf("input %q: step %s has no output %q", name, ref.Step, ref.Output)
		}
		v.Artifacts[name], sums[name] = out.URI, out.SHA256
	}
	for _, name := range slices.Sorted(maps.Keys(sp.Wiring.Collected)) {
		ref := sp.Wiring.Collected[name]
		recs, err := e.collected(ref)
		if err != nil {
			return v, nil, fmt.Errorf("input %q: %v", name, err)
		}
		v.Collected[name] = recs
	}
	stepcache.AddCollectedSums(sums, v.Collected)
	if sp.Finally {
		e.mu.Lock()
		v.RunFields = e.runFields
		e.mu.Unlock()
	}
	return v, sums, nil
}

// collected returns the records of an output of every iteration of a
// loop step, in order.
func (e *execution) collected(ref plan.OutputRef) ([]artifacts.OutputRecord, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	recs := []artifacts.OutputRecord{}
	for i, pos := range e.iterations[ref.Step] {
		it := &e.run.Steps[pos]
		k := slices.IndexFunc(it.Outputs, func(o artifacts.OutputRecord) bool { return o.Name == ref.Output })
		if k < 0 {
			return nil, fmt.Errorf("iteration %d of step %s has no output %q", i, ref.Step, ref.Output)
		}
		recs = append(recs, it.Outputs[k])
	}
	return recs, nil
}

// outputValue is the value of an output parameter of a finished step.
func (e *execution) outputValue(ref plan.OutputRef) (string, error) {
	out, ok := e.output(ref.Step, ref.Output)
	if !ok || out.Value == nil {
		return "", fmt.Errorf("step %s has no output parameter %q", ref.Step, ref.Output)
	}
	return *out.Value, nil
}

// output returns an output record of a finished step.
func (e *execution) output(step, name string) (artifacts.OutputRecord, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, o := range e.step(step).Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return artifacts.OutputRecord{}, false
}

// logCopyEvery is how often the log of a running step is copied to the
// store, so that readers (pipectl ui, pipectl logs) see it grow.
const logCopyEvery = 2 * time.Second

// copyLogWhileRunning copies the log file at path to the store every
// logCopyEvery while it grows, until the returned func is called; that func
// returns once no copy is under way, so the final upload comes last.
func copyLogWhileRunning(ctx context.Context, s artifacts.Store, run, step, path string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(logCopyEvery)
		defer tick.Stop()
		var copied int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if st, err := os.Stat(path); err == nil && st.Size() != copied {
				if uploadLog(ctx, s, run, step, path) == nil {
					copied = st.Size()
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func uploadLog(ctx context.Context, s artifacts.Store, run, step, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// A running step's log grows while it is read: take what was there.
	return s.Put(ctx, artifacts.LogKey(run, step), io.LimitReader(f, st.Size()), st.Size())
}
