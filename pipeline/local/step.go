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
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// logTail is how many log lines of a failed step the summary shows.
const logTail = 15

// runStep runs one step to its end and records it.
func (e *execution) runStep(ctx context.Context, s *pipeline.Step) {
	start := e.r.now()
	e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Started = &start })
	fail := func(code int, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		e.finish(ctx, s.Name, artifacts.StatusFailed, &code, msg)
		e.r.statusf("%-12s failed: %s\n", s.Name, msg)
	}
	sp, err := plan.Build(e.p, s.Name)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	if sp.When != nil {
		ok, err := sp.When.Eval(plan.Values{Params: e.params}, e.outputValue)
		if err != nil {
			fail(1, "when: %v", err)
			return
		}
		if !ok {
			e.finish(ctx, s.Name, artifacts.StatusSkipped, nil, fmt.Sprintf("condition %q is false", sp.When.Source))
			e.r.statusf("%-12s skipped: condition %q is false\n", s.Name, sp.When.Source)
			return
		}
	}
	inv, inputSums, err := e.invocation(sp)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	fp, err := fingerprint(ctx, inv, inputSums, s)
	if err != nil {
		fail(1, "fingerprint: %v", err)
		return
	}
	e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Fingerprint = fp })
	if !e.r.NoCache && sp.Cache {
		if hit, ok := lookupCache(ctx, e.r.Store, fp); ok {
			end := e.r.now()
			code := 0
			e.update(ctx, s.Name, func(r *artifacts.StepRecord) {
				r.Status, r.Cached, r.CachedFrom, r.Outputs, r.Finished, r.ExitCode = artifacts.StatusSucceeded, true, hit.Run, hit.Outputs, &end, &code
				r.Message = "outputs reused from run " + hit.Run
			})
			e.r.statusf("%-12s cached: reusing the outputs of step %s of run %s\n", s.Name, hit.Step, hit.Run)
			return
		}
	}

	dir := e.workDir(s.Name)
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
	e.tails[s.Name] = t
	e.mu.Unlock()
	var writers []*components.LineWriter
	output := func(prefix string) io.Writer {
		w := components.NewLineWriter(&e.logMu, prefix, t, logFile, e.r.Logs)
		writers = append(writers, w)
		return w
	}
	stepLog := output("[" + s.Name + "] ")

	stopCopy := copyLogWhileRunning(ctx, e.r.Store, e.run.ID, s.Name, logFile.Name())
	attempts, records, runErr := e.attempts(ctx, sp, inv, components.Workspace{Dir: dir}, output, stepLog)
	stopCopy()
	for _, w := range writers {
		w.Flush()
	}
	logFile.Close()
	if err := uploadLog(context.WithoutCancel(ctx), e.r.Store, e.run.ID, s.Name, logFile.Name()); err != nil {
		e.r.statusf("warning: cannot store the log of step %s: %v\n", s.Name, err)
	}
	e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Attempts = attempts })
	code := components.ExitCode(runErr)
	took := e.r.now().Sub(start).Round(time.Millisecond)
	switch {
	case runErr == nil:
		e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Outputs = records })
		e.finish(ctx, s.Name, artifacts.StatusSucceeded, &code, "")
		e.r.statusf("%-12s succeeded in %s\n", s.Name, took)
		if sp.Cache {
			if err := storeCache(context.WithoutCancel(ctx), e.r.Store, fp, cacheEntry{Run: e.run.ID, Step: s.Name, Outputs: records}); err != nil {
				e.r.statusf("warning: cannot write the cache entry of step %s: %v\n", s.Name, err)
			}
		}
	case ctx.Err() != nil:
		e.finish(ctx, s.Name, artifacts.StatusCancelled, nil, "run cancelled")
		e.r.statusf("%-12s cancelled\n", s.Name)
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
	g := &launcher.Gang{
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
			outs[rank] = output(fmt.Sprintf("[%s rank %d] ", sp.Name, rank))
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

// invocation evaluates the step's plan with the run's values: parameters,
// upstream output parameters, and the recorded URIs of input artifacts
// (with their sha256).
func (e *execution) invocation(sp *plan.Step) (*components.Invocation, map[string]string, error) {
	c, err := sp.Component.Resolve(nil)
	if err != nil {
		return nil, nil, err
	}
	// The image is part of the step's fingerprint.
	c.Image = sp.Image
	v := plan.Values{Run: e.run.ID, Params: e.params, Upstream: map[string]string{}, Artifacts: map[string]string{}}
	sums := map[string]string{}
	for _, name := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[name]
		val, err := e.outputValue(ref)
		if err != nil {
			return nil, nil, fmt.Errorf("input %q: %v", name, err)
		}
		v.Upstream[name] = val
	}
	for _, name := range slices.Sorted(maps.Keys(sp.Wiring.Inputs)) {
		ref := sp.Wiring.Inputs[name]
		out, ok := e.output(ref.Step, ref.Output)
		if !ok {
			return nil, nil, fmt.Errorf("input %q: step %s has no output %q", name, ref.Step, ref.Output)
		}
		v.Artifacts[name], sums[name] = out.URI, out.SHA256
	}
	inv, err := sp.Wiring.Invocation(c, e.r.Store, v)
	return inv, sums, err
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
