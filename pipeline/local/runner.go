package local

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Runner runs pipelines locally.
type Runner struct {
	// Store receives outputs, logs and the run record.
	Store artifacts.Store
	// Source is the pipeline file as the record names it (default: the
	// pipeline's own, Pipeline.Source).
	Source string
	// Origin, when set, is recorded as where the run came from
	// (origin.Of); each step's record has its code digest either way.
	Origin *record.Origin
	// Parallelism bounds the steps running at once (default: the number of CPUs).
	Parallelism int
	// NoCache turns off output reuse for every step.
	NoCache bool
	// Logs receives every step's log lines, prefixed with the step (and rank).
	Logs io.Writer
	// Status receives progress and the final summary.
	Status io.Writer
	// WorkDir is where per-step work directories are made (default: the
	// system temp directory). They are removed after the run unless KeepWork.
	WorkDir  string
	KeepWork bool
	// GracePeriod is the time between SIGTERM and SIGKILL when a step is stopped.
	GracePeriod time.Duration
	// FinallyGrace bounds the finally steps of a cancelled run: they start
	// when the other steps have stopped and are stopped FinallyGrace after
	// the cancel (default DefaultFinallyGrace).
	FinallyGrace time.Duration
	// HeartbeatInterval is how often the run's heartbeat is written
	// (default record.HeartbeatInterval).
	HeartbeatInterval time.Duration
	// ResumeFrom, when set, is the run whose last checkpoint of a
	// distributed step the step starts from while this run has none of
	// its own (`pipectl run --rerun` of a failed run).
	ResumeFrom string
	// RunID names the run; by default <pipeline>-<date>-<time>-<random>.
	RunID string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Import reads the objects outside the store that artifact params
	// name (gs://, s3://, oci://), imported into Store before any step runs
	// (pipeline/imports); its TempDir defaults to WorkDir.
	Import imports.Options
	// Schedule and ScheduledTime, for a run a schedule starts, name the
	// schedule and the time it is scheduled for (RFC 3339): the run's
	// {{run.scheduledTime}} and its record say them. A run without a
	// ScheduledTime reads its start time (UTC) there.
	Schedule, ScheduledTime string
	// Path lists directories put before PATH in every step's environment
	// (a project's local settings): a step's program is looked up there first.
	Path []string
}

// DefaultFinallyGrace is Runner.FinallyGrace unless set.
const DefaultFinallyGrace = time.Minute

// RunError reports a run that did not succeed.
type RunError struct {
	Run *record.Run
	// Summary names the failed steps, their exit codes and last log lines.
	Summary string
}

func (e *RunError) Error() string {
	return fmt.Sprintf("run %s %s", e.Run.ID, strings.ToLower(e.Run.Status))
}

// NewRunID returns a run id for pipeline name at t: a DNS-1123 label of at
// most 61 characters that sorts by time, with 40 random bits per second.
// The run record is created exclusively, so a taken id is drawn again.
func NewRunID(name string, t time.Time) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	if len(name) > 36 {
		name = strings.TrimRight(name[:36], "-")
	}
	// base32 in lower case: 8 characters of a DNS label.
	enc := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	return fmt.Sprintf("%s-%s-%s", name, t.UTC().Format("20060102-150405"), enc.EncodeToString(b[:]))
}

// Run runs p with the given parameter values (resolved, see
// Pipeline.ResolveParams). It returns the run record, and a *RunError when
// the run failed or was cancelled (ctx ended).
func (r *Runner) Run(ctx context.Context, p *pipeline.Pipeline, params map[string]string) (*record.Run, error) {
	imp := r.Import
	imp.TempDir = cmp.Or(imp.TempDir, r.WorkDir)
	params, err := imports.Resolve(ctx, r.Store, p, params, imp, r.statusf)
	if err != nil {
		return nil, err
	}
	secrets, err := secretNames(p, params)
	if err != nil {
		return nil, err
	}
	// A step's fingerprint holds its component folder's digest, as on a
	// cluster, where that folder is shipped with the run.
	// The run's own folders (a local store, the work folders) are not
	// part of a component's code when they are inside its folder.
	opts := codepack.Defaults
	opts.Exclude = []string{r.workBase()}
	if dir, ok := artifacts.LocalDir(r.Store); ok {
		opts.Exclude = append(opts.Exclude, dir)
	}
	err = p.StampCode(ctx, func(ctx context.Context, dir string) (string, error) {
		return codepack.Digest(ctx, dir, opts)
	})
	if err != nil {
		return nil, err
	}
	org := r.Origin
	if org != nil && org.Pipeline == nil && p.Source != "" {
		// The pipeline as it runs, kept for a rerun (pipectl run --rerun).
		o := *org
		org = &o
		if org.Pipeline, err = origin.ShipPipeline(ctx, r.Store, p, opts); err != nil {
			r.statusf("Warning: the pipeline is not kept with the run (no rerun of it): %v\n", err)
		}
	}
	now := r.now()
	id := r.RunID
	if id == "" {
		id = NewRunID(p.Metadata.Name, now)
	}
	run, index := r.newRecord(p, id, now, params, org)
	base := r.workBase()
	_, _ = RemoveStaleWork(base)
	work, err := newWorkDir(base, id)
	if err != nil {
		return nil, err
	}
	var remove []string
	if !r.KeepWork {
		defer os.RemoveAll(work)
		remove = append(remove, work)
	}
	// No step or rank process outlives this one, even killed with SIGKILL.
	guard, err := process.StartGuard(filepath.Join(work, ".groups"), remove...)
	if err != nil {
		return nil, err
	}
	defer guard.Close()
	ctx = process.WithGuard(ctx, guard)
	e := &execution{r: r, p: p, params: params, run: run, work: work, index: index, tails: map[string]*process.Tail{}, iterations: map[string][]int{}, secrets: secrets}
	e.jr = newJournal(e, len(p.Steps))
	if err := e.create(ctx); err != nil {
		return nil, fmt.Errorf("write run record: %w", err)
	}
	id = run.ID
	if err := origin.WriteResolved(ctx, r.Store, id, p); err != nil {
		r.statusf("Warning: the resolved pipeline is not kept with the run: %v\n", err)
	}
	r.statusf("Run %s of pipeline %s started (%s; artifacts in %s)\n", id, p.Metadata.Name, stepCount(len(p.Steps)), r.Store.Root())
	go e.jr.run(context.WithoutCancel(ctx))
	var main, final []int
	for i, s := range p.Steps {
		if s.Finally {
			final = append(final, i)
		} else {
			main = append(main, i)
		}
	}
	e.schedule(ctx, main)
	if len(final) > 0 {
		e.runFinally(ctx, final)
	}
	e.jr.close()
	return e.end(ctx, now)
}

// newRecord is the record of run id of p as it starts, every step pending,
// and each step's position in it.
func (r *Runner) newRecord(p *pipeline.Pipeline, id string, now time.Time, params map[string]string, org *record.Origin) (*record.Run, map[string]int) {
	run := &record.Run{
		ID: id, Pipeline: p.Metadata.Name, Status: record.StatusRunning, Started: now,
		Source: cmp.Or(r.Source, p.Source), On: "local", Params: params, Runner: recordstore.ThisRunner(), Origin: org,
		Schedule: r.Schedule, ScheduledTime: r.ScheduledTime,
	}
	index := make(map[string]int, len(p.Steps))
	for i, s := range p.Steps {
		rs := record.StepRecord{Name: s.Name, Status: record.StatusPending, DependsOn: s.Deps(), Outputs: []record.OutputRecord{}}
		if s.Resolved != nil {
			rs.Code = s.Resolved.Code
		}
		run.Steps = append(run.Steps, rs)
		index[s.Name] = i
	}
	return run, index
}

// end records the run's outcome once every step has ended, and reports
// it: the record, and a *RunError when the run failed or was cancelled.
func (e *execution) end(ctx context.Context, started time.Time) (*record.Run, error) {
	r, run := e.r, e.run
	e.mu.Lock()
	end := r.now()
	run.Finished = &end
	status, failed := e.outcome(ctx, false)
	run.Status = status
	if run.Status == record.StatusCancelled {
		run.Message = "cancelled"
	} else if len(failed) > 0 {
		run.Message = "failed steps: " + strings.Join(failed, ", ")
	}
	e.mu.Unlock()
	// The record must be written even when ctx was cancelled.
	if err := e.save(context.WithoutCancel(ctx)); err != nil {
		return run, fmt.Errorf("write run record: %w", err)
	}
	e.jr.remove(context.WithoutCancel(ctx))
	var rerr *RunError
	if run.Status != record.StatusSucceeded {
		rerr = &RunError{Run: run, Summary: e.summary()}
	}
	// The caller gets the steps in the record's order; the run is over.
	e.mu.Lock()
	run.Steps = e.ordered()
	e.mu.Unlock()
	if rerr == nil {
		r.statusf("Run %s succeeded in %s\n", run.ID, end.Sub(started).Round(time.Millisecond))
		return run, nil
	}
	r.statusf("%s", rerr.Summary)
	return run, rerr
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Runner) statusf(format string, args ...any) {
	if r.Status != nil {
		fmt.Fprintf(r.Status, format, args...)
	}
}

// workBase is where the runs' work directories are made.
func (r *Runner) workBase() string {
	if r.WorkDir != "" {
		return r.WorkDir
	}
	return os.TempDir()
}

func (r *Runner) parallelism() int {
	if r.Parallelism > 0 {
		return r.Parallelism
	}
	return runtime.NumCPU()
}

// execution is the state of one run.
type execution struct {
	r      *Runner
	p      *pipeline.Pipeline
	params map[string]string
	work   string
	// secrets are the variables steps take as secrets (see environ).
	secrets map[string]bool

	mu    sync.Mutex // guards run, tails and the journal's dirty steps
	run   *record.Run
	index map[string]int // step name → position in p.Steps and run.Steps
	tails map[string]*process.Tail
	jr    *journal
	// iterations are the positions in run.Steps of each loop step's
	// iterations, in order (appended after the pipeline's steps).
	iterations map[string][]int
	// runFields are the {{run.FIELD}} values finally steps read.
	runFields map[string]string

	logMu sync.Mutex // serialises log lines to the shared sinks
}

// step returns the record of the named step; e.mu must be held.
func (e *execution) step(name string) *record.StepRecord {
	return &e.run.Steps[e.index[name]]
}

// create writes the run's first record exclusively, so that no two runs
// share an id: a generated id that is taken is drawn again; a given one
// (Runner.RunID) is an error.
func (e *execution) create(ctx context.Context) error {
	for tries := 1; ; tries++ {
		err := recordstore.CreateRun(ctx, e.r.Store, e.run)
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if e.r.RunID != "" || tries == 10 {
			return fmt.Errorf("run %s already exists in %s", e.run.ID, e.r.Store.Root())
		}
		e.run.ID = NewRunID(e.p.Metadata.Name, e.run.Started)
	}
}

// save writes the whole run record, saying which journal entries it holds.
func (e *execution) save(ctx context.Context) error {
	e.mu.Lock()
	e.run.Journal = e.jr.seq
	rec := *e.run
	rec.Steps = e.ordered()
	b, err := artifacts.MarshalShallow(&rec)
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return e.r.Store.Put(ctx, record.RunKey(e.run.ID), bytes.NewReader(b), int64(len(b)))
}

// update changes a step's record under the lock; the journal writes it.
func (e *execution) update(_ context.Context, step string, f func(s *record.StepRecord)) {
	e.mu.Lock()
	f(e.step(step))
	e.jr.mark(e.index[step])
	e.mu.Unlock()
}

func (e *execution) status(step string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.step(step).Status
}

// schedule runs the steps at the given positions of p.Steps whose
// dependencies (among them) succeeded, at most parallelism at once (a loop
// step counts once; its iterations have their own bound), in the
// pipeline's order among those ready, until no step can make progress.
// Each step's dependencies are counted once, and a step's end only visits
// its dependents.
func (e *execution) schedule(ctx context.Context, which []int) {
	n := len(e.p.Steps)
	in := make([]bool, n)
	for _, i := range which {
		in[i] = true
	}
	deps := make([][]int, n)
	dependents := make([][]int, n)
	waiting := make([]int, n)
	var ready readyQueue
	for _, i := range which {
		for _, d := range e.p.Steps[i].Deps() {
			j := e.index[d]
			if !in[j] {
				continue
			}
			deps[i] = append(deps[i], j)
			dependents[j] = append(dependents[j], i)
		}
		waiting[i] = len(deps[i])
		if waiting[i] == 0 {
			heap.Push(&ready, i)
		}
	}
	resolved := func(i int) {
		for _, j := range dependents[i] {
			if waiting[j]--; waiting[j] == 0 {
				heap.Push(&ready, j)
			}
		}
	}
	done := make(chan int, len(which))
	running := 0
	for {
		for ready.Len() > 0 {
			i := ready[0]
			s := &e.p.Steps[i]
			blocker := e.blocker(s, deps[i])
			if blocker == "" && ctx.Err() == nil && running >= e.r.parallelism() {
				break
			}
			heap.Pop(&ready)
			switch {
			case ctx.Err() != nil:
				e.finish(ctx, s.Name, record.StatusCancelled, nil, "run cancelled before the step started")
				resolved(i)
			case blocker != "":
				e.finish(ctx, s.Name, record.StatusSkipped, nil, blocker)
				e.r.statusf("%-12s skipped: %s\n", s.Name, blocker)
				resolved(i)
			default:
				running++
				e.update(ctx, s.Name, func(r *record.StepRecord) { r.Status = record.StatusRunning })
				go func() {
					e.runStep(ctx, s)
					done <- i
				}()
			}
		}
		if running == 0 {
			return
		}
		select {
		case i := <-done:
			running--
			resolved(i)
		case <-ctx.Done():
			// Cancel the steps that are ready now rather than after the
			// running ones have stopped.
			for ready.Len() > 0 {
				i := heap.Pop(&ready).(int)
				e.finish(ctx, e.p.Steps[i].Name, record.StatusCancelled, nil, "run cancelled before the step started")
				resolved(i)
			}
			i := <-done
			running--
			resolved(i)
		}
	}
}

// outcome is the status of the run from its step records, and the names
// of its failed steps (iterations as STEP[i]; a loop step only when it
// failed without iterations), in order; mainOnly leaves out the finally
// steps. e.mu must be held.
func (e *execution) outcome(ctx context.Context, mainOnly bool) (string, []string) {
	status := record.StatusSucceeded
	failed := []string{}
	for _, s := range e.ordered() {
		base := s.Name
		if step, _, ok := pipeline.SplitIteration(s.Name); ok {
			base = step
		}
		if mainOnly && e.p.Step(base).Finally {
			continue
		}
		switch s.Status {
		case record.StatusFailed:
			status = record.StatusFailed
			if base != s.Name || len(e.iterations[s.Name]) == 0 {
				failed = append(failed, s.Name)
			}
		case record.StatusCancelled:
			if status != record.StatusFailed {
				status = record.StatusCancelled
			}
		}
	}
	if ctx.Err() != nil {
		status = record.StatusCancelled
	}
	return status, failed
}

// runFinally runs the finally steps once the other steps have ended, with
// the run's outcome as {{run.status}} and {{run.failedSteps}}. When the run
// is cancelled they still run, until FinallyGrace after the cancel.
func (e *execution) runFinally(ctx context.Context, final []int) {
	e.mu.Lock()
	status, failed := e.outcome(ctx, true)
	names, _ := json.Marshal(failed)
	e.runFields = map[string]string{pipeline.RunStatus: status, pipeline.RunFailedSteps: string(names)}
	e.mu.Unlock()
	grace := e.r.FinallyGrace
	if grace <= 0 {
		grace = DefaultFinallyGrace
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		e.r.statusf("finally steps: stopped in %s at the latest\n", grace)
		time.AfterFunc(grace, cancel)
	})
	defer stop()
	e.schedule(fctx, final)
}

// readyQueue holds the positions of the steps ready to start, smallest
// (earliest in the pipeline) first.
type readyQueue []int

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return q[i] < q[j] }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(int)) }
func (q *readyQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// finish records a step's end.
func (e *execution) finish(ctx context.Context, step, status string, exitCode *int, msg string) {
	end := e.r.now()
	e.update(ctx, step, func(r *record.StepRecord) {
		r.Status, r.Message, r.Finished = status, msg, &end
		if exitCode != nil {
			r.ExitCode = exitCode
		}
	})
}

// summary describes the failed steps of an ended run.
func (e *execution) summary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s %s.\n", e.run.ID, strings.ToLower(e.run.Status))
	for _, s := range e.ordered() {
		if s.Status == record.StatusSucceeded {
			continue
		}
		name := s.Name
		if its := e.iterations[s.Name]; len(its) > 0 {
			name = pipeline.IterationRange(s.Name, len(its))
		}
		fmt.Fprintf(&b, "  %-12s %s", name, s.Status)
		// Exit code 0 is a program that succeeded before the step failed (its
		// outputs not written or not stored): the message says which.
		msg := s.Message
		if s.ExitCode != nil && *s.ExitCode != 0 && s.Status == record.StatusFailed && len(e.iterations[s.Name]) == 0 {
			fmt.Fprintf(&b, " (exit code %d)", *s.ExitCode)
			if msg == fmt.Sprintf("exit code %d", *s.ExitCode) {
				msg = "" // said already
			}
		}
		if msg != "" {
			fmt.Fprintf(&b, ": %s", msg)
		}
		b.WriteString("\n")
		if t := e.tails[s.Name]; t != nil && s.Status == record.StatusFailed && len(t.Lines()) > 0 {
			fmt.Fprintf(&b, "  last lines of %s:\n", s.Name)
			for _, l := range t.Lines() {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "Logs: pipectl logs %s --artifacts %s\n", e.run.ID, e.r.Store.Root())
	return b.String()
}

// workDir returns the step's work directory.
func (e *execution) workDir(step string) string { return filepath.Join(e.work, step) }

// blocker is why step s, whose dependencies (at positions deps) ended,
// cannot run, or "": a dependency did not succeed, except a candidate of
// an input given the output of the first of several steps that ran
// (pipeline.Step.OneOfGroups), which may be skipped as long as one of its
// group succeeded. A step with trigger: completed runs whatever the
// outcome of its dependencies.
func (e *execution) blocker(s *pipeline.Step, deps []int) string {
	if s.AfterCompleted() {
		return ""
	}
	groups := s.OneOfGroups()
	soft := map[string]bool{}
	for _, g := range groups {
		for _, name := range g {
			soft[name] = true
		}
	}
	for _, j := range deps {
		name := e.p.Steps[j].Name
		if st := e.status(name); st != record.StatusSucceeded && (st != record.StatusSkipped || !soft[name]) {
			return fmt.Sprintf("upstream step %s %s", name, strings.ToLower(st))
		}
	}
	for _, g := range groups {
		if !slices.ContainsFunc(g, func(name string) bool { return e.status(name) == record.StatusSucceeded }) {
			return fmt.Sprintf("none of upstream steps %s ran (the first of them that ran gives an input)", strings.Join(g, ", "))
		}
	}
	return ""
}

// stepCount is "1 step" or "N steps".
func stepCount(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}
