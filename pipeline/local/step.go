package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/inputs"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/step"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// logTail is how many log lines of a failed step the summary shows.
const logTail = 15

// runStep runs one step to its end and records it: its when, then its
// one execution or, for a loop step, its iterations.
func (e *execution) runStep(ctx context.Context, s *pipeline.Step) {
	start := e.r.now()
	e.update(ctx, s.Name, func(r *record.StepRecord) { r.Started = &start })
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
			e.finish(ctx, s.Name, record.StatusSkipped, nil, fmt.Sprintf("condition %q is false", sp.When.Source))
			e.r.statusf("%-12s skipped: condition %q is false\n", s.Name, sp.When.Source)
			return
		}
	}
	v, sums, err := e.values(ctx, sp)
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
		e.finish(ctx, step, record.StatusCancelled, nil, "run cancelled")
		e.r.statusf("%-12s cancelled\n", step)
		return
	}
	msg := fmt.Sprintf(format, args...)
	e.finish(ctx, step, record.StatusFailed, &code, msg)
	e.r.statusf("%-12s failed: %s\n", step, msg)
}

// execute runs one execution of a step (the step, or one iteration of a
// loop step) named name, with values v, through the step executor, and
// records it: the cache, the attempts, the log and the outputs.
func (e *execution) execute(ctx context.Context, sp *plan.Step, name string, v plan.Values, inputSums map[string]string) {
	start := e.r.now()
	e.update(ctx, name, func(r *record.StepRecord) { r.Status, r.Started = record.StatusRunning, &start })
	fail := func(code int, format string, args ...any) { e.fail(ctx, name, code, format, args...) }
	switch reason, err := sp.Wiring.SkipReason(v, e.finished); {
	case err != nil:
		fail(1, "%v", err)
		return
	case reason != "":
		e.finish(ctx, name, record.StatusSkipped, nil, reason)
		e.r.statusf("%-12s skipped: %s\n", name, reason)
		return
	}
	inputSums, err := inputs.Iteration(sp.Wiring, &v, inputSums, source{e})
	if err != nil {
		fail(1, "%v", err)
		return
	}
	inv, err := sp.Wiring.Invocation(sp.Component, e.r.Store, v)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	inv.Image = sp.Image // part of the step's fingerprint
	dir := e.workDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(1, "%v", err)
		return
	}
	log, err := step.CreateLog(dir)
	if err != nil {
		fail(1, "%v", err)
		return
	}
	defer log.Close()
	log.Live = true
	t := process.NewTail(logTail)
	e.mu.Lock()
	e.tails[name] = t
	e.mu.Unlock()
	var writers []*process.LineWriter
	output := func(prefix string) io.Writer {
		w := process.NewLineWriter(&e.logMu, prefix, t, log, e.r.Logs)
		writers = append(writers, w)
		return w
	}
	stepLog := output("[" + name + "] ")
	job := &step.Job{
		Run: e.run.ID, Name: name, Invocation: inv, InputSums: inputSums, Image: sp.Image,
		Cache: wire.StepCacheMode(sp.Cache, e.r.NoCache), AlwaysFingerprint: true, Lineage: true,
		Strategy: e.strategy(sp, name, dir, output, stepLog),
		Retries:  sp.Retries, Timeout: sp.Timeout.Duration, RetryLog: stepLog,
		Log: log,
		Fingerprinted: func(fp string) {
			e.update(ctx, name, func(r *record.StepRecord) { r.Fingerprint = fp })
		},
		Warnf: func(format string, args ...any) { e.r.statusf("warning: "+format+"\n", args...) },
	}
	if d := sp.Distributed; d != nil {
		job.Shape = stepcache.Shape{Nodes: d.Nodes, Procs: d.LocalProcsPerNode, Framework: string(d.Framework)}
	}
	job.Flush = func() {
		for _, w := range writers {
			w.Flush()
		}
	}
	res, runErr := (&step.Executor{Store: e.r.Store}).Execute(ctx, job)
	if res.Cached {
		end, code := e.r.now(), 0
		hit := res.Hit
		e.update(ctx, name, func(r *record.StepRecord) {
			r.Status, r.Cached, r.CachedFrom, r.Outputs, r.Finished, r.ExitCode = record.StatusSucceeded, true, hit.Run, hit.Outputs, &end, &code
			r.Message = "outputs reused from run " + hit.Run
		})
		e.r.statusf("%-12s cached: reusing the outputs of step %s of run %s\n", name, hit.Step, hit.Run)
		if runErr != nil {
			e.r.statusf("warning: cannot write the outputs record of step %s: %v\n", name, runErr)
		}
		return
	}
	e.update(ctx, name, func(r *record.StepRecord) { r.Attempts = res.Attempts })
	code := step.ProgramExitCode(runErr)
	took := e.r.now().Sub(start).Round(time.Millisecond)
	switch {
	case runErr == nil:
		e.update(ctx, name, func(r *record.StepRecord) {
			// A step without outputs records [], as on Argo.
			r.Outputs = append([]record.OutputRecord{}, res.Outputs...)
		})
		e.finish(ctx, name, record.StatusSucceeded, &code, "")
		if v.Iteration == nil {
			e.r.statusf("%-12s succeeded in %s\n", name, took)
		}
	case ctx.Err() != nil:
		e.finish(ctx, name, record.StatusCancelled, nil, "run cancelled")
		e.r.statusf("%-12s cancelled\n", name)
	default:
		fail(code, "%v", runErr)
	}
}

// strategy is how the step's program runs in the work directory dir: one
// process, or the gang of a distributed step (with its own restarts, each
// failed or stalled gang attempt and the ranks' metrics recorded in step
// name's record).
func (e *execution) strategy(sp *plan.Step, name, dir string, output func(string) io.Writer, stepLog io.Writer) step.Strategy {
	d := sp.Distributed
	if d == nil {
		p := step.NewProcess(e.r.Store, dir)
		p.Env, p.Stdout, p.Stderr, p.GracePeriod = e.environ(sp), stepLog, stepLog, e.r.GracePeriod
		return p
	}
	g := step.NewGang(e.r.Store, dir)
	g.Nodes, g.ProcsPerNode, g.MaxRestarts, g.Framework = d.Nodes, d.LocalProcsPerNode, d.MaxRestarts, d.Framework
	g.Env, g.Output, g.Log, g.GracePeriod = e.environ(sp), output, stepLog, e.r.GracePeriod
	g.StallTimeout = d.StallTimeout.Duration
	ckpt := checkpoint.Options{Keep: d.CheckpointKeep, Every: d.CheckpointEvery.Duration, From: e.r.ResumeFrom}
	g.Checkpoint, g.CheckpointEvery = ckpt.Keeper(e.r.Store, e.run.ID, name, g.CheckpointDir()), ckpt.Interval()
	g.Ended = func(a record.GangAttempt) {
		e.update(context.Background(), name, func(r *record.StepRecord) { r.GangAttempts = append(r.GangAttempts, a) })
	}
	g.Progress = func(p record.Progress) {
		e.update(context.Background(), name, func(r *record.StepRecord) { r.Progress = &p })
	}
	return g
}

// values are the run-time values of the step's plan: parameters, upstream
// output parameters, the inputs (package inputs: artifacts, the collected
// outputs of loop steps…) and, for a finally step, the run's outcome. sums
// are the sha256 of the input artifacts, for the fingerprint.
func (e *execution) values(ctx context.Context, sp *plan.Step) (plan.Values, map[string]string, error) {
	v := plan.Values{Run: e.run.ID, Params: e.params, Upstream: map[string]string{}, ScheduledTime: e.scheduledTime()}
	for _, name := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[name]
		val, err := e.outputValue(ref)
		if err != nil {
			return v, nil, fmt.Errorf("input %q: %v", name, err)
		}
		v.Upstream[name] = val
	}
	sums, err := inputs.Resolve(ctx, e.r.Store, sp.Wiring, &v, source{e})
	if err != nil {
		return v, nil, err
	}
	if sp.Finally {
		e.mu.Lock()
		v.RunFields = e.runFields
		e.mu.Unlock()
	}
	return v, sums, nil
}

// source is the inputs.Source of a local run: the outputs its steps
// recorded in memory.
type source struct{ e *execution }

func (s source) Finished(ref plan.OutputRef) (record.OutputRecord, bool, error) {
	return s.e.finished(ref)
}

func (s source) Artifact(ref plan.OutputRef) (string, string, error) {
	out, ok := s.e.output(ref.Step, ref.Output)
	if !ok {
		return "", "", fmt.Errorf("step %s has no output %q", ref.Step, ref.Output)
	}
	return out.URI, out.SHA256, nil
}

func (s source) Iterations(ref plan.OutputRef, its []int, all bool) ([]record.OutputRecord, error) {
	return s.e.collected(ref, func(i int) bool { return all || slices.Contains(its, i) })
}

// collected returns the records of an output of every iteration of a
// loop step that ran (was not skipped) and keep keeps, in order.
func (e *execution) collected(ref plan.OutputRef, keep func(int) bool) ([]record.OutputRecord, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	recs := []record.OutputRecord{}
	for i, pos := range e.iterations[ref.Step] {
		it := &e.run.Steps[pos]
		if it.Status == record.StatusSkipped || !keep(i) {
			continue // its condition was false: only the iterations that ran give an output
		}
		k := slices.IndexFunc(it.Outputs, func(o record.OutputRecord) bool { return o.Name == ref.Output })
		if k < 0 {
			return nil, fmt.Errorf("iteration %d of step %s has no output %q", i, ref.Step, ref.Output)
		}
		recs = append(recs, it.Outputs[k])
	}
	return recs, nil
}

// finished returns an output of a step (or iteration) that succeeded; ok
// is false when it did not (it was skipped, say).
func (e *execution) finished(ref plan.OutputRef) (record.OutputRecord, bool, error) {
	if e.status(ref.Step) != record.StatusSucceeded {
		return record.OutputRecord{}, false, nil
	}
	out, ok := e.output(ref.Step, ref.Output)
	if !ok {
		return out, false, fmt.Errorf("no output %q", ref.Output)
	}
	return out, true, nil
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
func (e *execution) output(step, name string) (record.OutputRecord, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, o := range e.step(step).Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return record.OutputRecord{}, false
}

// secretNames are the variables the steps of p take as secrets, each of
// which but an optional one must be set in pipectl's environment: locally
// that is where a secret comes from (whatever the Secret's name).
func secretNames(p *pipeline.Pipeline, params map[string]string) (map[string]bool, error) {
	names := map[string]bool{}
	var missing []string
	for _, s := range p.Steps {
		for _, sec := range s.Secrets {
			if _, ok := os.LookupEnv(sec.Env); !ok && !sec.Optional && !names[sec.Env] {
				secret := "Secret " + sec.Secret
				switch b := sec.Ref(); {
				case b.Param != "":
					secret = fmt.Sprintf("the Secret -p %s names (%s)", b.Param, params[b.Param])
				case b.Step != "":
					secret = fmt.Sprintf("the Secret output %s of step %s names", b.Output, b.Step)
				}
				missing = append(missing, fmt.Sprintf("%s (step %s; %s, key %s, on a cluster)", sec.Env, s.Name, secret, sec.Key))
			}
			names[sec.Env] = true
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("secrets not set: %s: a local run gives a step's secret from the variable of that name in the environment pipectl runs in", strings.Join(missing, ", "))
	}
	return names, nil
}

// environ is the environment of a step's program: pipectl's own, less the
// variables other steps take as secrets and this one does not, so that a
// secret reaches only the steps that name it, as on a cluster, and less
// the configuration of imports (the run's, read before any step runs),
// with the Runner's Path before PATH.
func (e *execution) environ(sp *plan.Step) []string {
	mine := map[string]bool{}
	for _, s := range sp.Secrets() {
		mine[s.Env] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); e.secrets[name] && !mine[name] || imports.IsImportEnv(name) {
			continue
		}
		env = append(env, kv)
	}
	if len(e.r.Path) > 0 {
		env = withPath(env, e.r.Path)
	}
	return env
}

// withPath returns env with dirs put before its PATH (the only PATH when
// env has none).
func withPath(env, dirs []string) []string {
	path := strings.Join(dirs, string(os.PathListSeparator))
	for i, kv := range env {
		if old, ok := strings.CutPrefix(kv, "PATH="); ok {
			if old != "" {
				path += string(os.PathListSeparator) + old
			}
			return append(append(env[:i:i], "PATH="+path), env[i+1:]...)
		}
	}
	return append(env, "PATH="+path)
}

// scheduledTime is the run's {{run.scheduledTime}}: the time its schedule
// fired it for, or its start time (UTC, RFC 3339) when run by hand.
func (e *execution) scheduledTime() string {
	if e.r.ScheduledTime != "" {
		return e.r.ScheduledTime
	}
	return e.run.Started.UTC().Format(time.RFC3339)
}
