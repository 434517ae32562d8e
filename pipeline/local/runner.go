package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// Runner runs pipelines locally.
type Runner struct {
	// Store receives outputs, logs and the run record.
	Store artifacts.Store
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
	// RunID names the run; by default <pipeline>-<date>-<time>-<random>.
	RunID string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// RunError reports a run that did not succeed.
type RunError struct {
	Run *artifacts.Run
	// Summary names the failed steps, their exit codes and last log lines.
	Summary string
}

func (e *RunError) Error() string {
	return fmt.Sprintf("run %s %s", e.Run.ID, strings.ToLower(e.Run.Status))
}

// NewRunID returns a run id for pipeline name at t: a DNS-1123 label that
// sorts by time.
func NewRunID(name string, t time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return fmt.Sprintf("%s-%s-%s", name, t.UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
}

// Run runs p with the given parameter values (resolved, see
// Pipeline.ResolveParams). It returns the run record, and a *RunError when
// the run failed or was cancelled (ctx ended).
func (r *Runner) Run(ctx context.Context, p *pipeline.Pipeline, params map[string]string) (*artifacts.Run, error) {
	now := r.now()
	id := r.RunID
	if id == "" {
		id = NewRunID(p.Metadata.Name, now)
	}
	run := &artifacts.Run{
		ID: id, Pipeline: p.Metadata.Name, Status: artifacts.StatusRunning, Started: now,
		Source: p.Source, On: "local", Params: params,
	}
	for _, s := range p.Steps {
		run.Steps = append(run.Steps, artifacts.StepRecord{Name: s.Name, Status: artifacts.StatusPending, DependsOn: s.Deps(), Outputs: []artifacts.OutputRecord{}})
	}
	base := r.WorkDir
	if base == "" {
		base = os.TempDir()
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(base, "pipectl-"+id+"-")
	if err != nil {
		return nil, err
	}
	if !r.KeepWork {
		defer os.RemoveAll(work)
	}
	e := &execution{r: r, p: p, params: params, run: run, work: work, tails: map[string]*components.Tail{}}
	if err := e.save(ctx); err != nil {
		return nil, fmt.Errorf("write run record: %w", err)
	}
	r.statusf("Run %s of pipeline %s started (%d steps; artifacts in %s)\n", id, p.Metadata.Name, len(p.Steps), r.Store.Root())
	e.schedule(ctx)

	e.mu.Lock()
	end := r.now()
	run.Finished = &end
	run.Status = artifacts.StatusSucceeded
	var failed []string
	for _, s := range run.Steps {
		switch s.Status {
		case artifacts.StatusFailed:
			run.Status = artifacts.StatusFailed
			failed = append(failed, s.Name)
		case artifacts.StatusCancelled:
			if run.Status != artifacts.StatusFailed {
				run.Status = artifacts.StatusCancelled
			}
		}
	}
	if ctx.Err() != nil {
		run.Status = artifacts.StatusCancelled
		run.Message = "cancelled"
	} else if len(failed) > 0 {
		run.Message = "failed steps: " + strings.Join(failed, ", ")
	}
	e.mu.Unlock()
	// The record must be written even when ctx was cancelled.
	if err := e.save(context.WithoutCancel(ctx)); err != nil {
		return run, fmt.Errorf("write run record: %w", err)
	}
	if run.Status == artifacts.StatusSucceeded {
		r.statusf("Run %s succeeded in %s\n", id, end.Sub(now).Round(time.Millisecond))
		return run, nil
	}
	rerr := &RunError{Run: run, Summary: e.summary()}
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

	mu    sync.Mutex // guards run and tails
	run   *artifacts.Run
	tails map[string]*components.Tail

	logMu sync.Mutex // serialises log lines to the shared sinks
}

func (e *execution) save(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return artifacts.WriteRun(ctx, e.r.Store, e.run)
}

// update changes a step's record under the lock and saves the run record.
func (e *execution) update(ctx context.Context, step string, f func(s *artifacts.StepRecord)) {
	e.mu.Lock()
	f(e.run.Step(step))
	e.mu.Unlock()
	if err := e.save(context.WithoutCancel(ctx)); err != nil {
		e.r.statusf("warning: cannot write the run record: %v\n", err)
	}
}

func (e *execution) status(step string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.run.Step(step).Status
}

func terminal(status string) bool {
	switch status {
	case artifacts.StatusSucceeded, artifacts.StatusFailed, artifacts.StatusSkipped, artifacts.StatusCancelled:
		return true
	}
	return false
}

// schedule runs every step whose dependencies succeeded, at most
// parallelism at once, until no step can make progress.
func (e *execution) schedule(ctx context.Context) {
	done := make(chan string)
	running := 0
	for {
		progressed := true
		for progressed {
			progressed = false
			for _, s := range e.p.Steps {
				if e.status(s.Name) != artifacts.StatusPending {
					continue
				}
				ready, blocker := true, ""
				for _, d := range e.p.Deps(s.Name) {
					st := e.status(d)
					if !terminal(st) {
						ready = false
						break
					}
					if st != artifacts.StatusSucceeded && blocker == "" {
						blocker = fmt.Sprintf("upstream step %s %s", d, strings.ToLower(st))
					}
				}
				if !ready {
					continue
				}
				switch {
				case ctx.Err() != nil:
					e.finish(ctx, s.Name, artifacts.StatusCancelled, nil, "run cancelled before the step started")
					progressed = true
				case blocker != "":
					e.finish(ctx, s.Name, artifacts.StatusSkipped, nil, blocker)
					e.r.statusf("%-12s skipped: %s\n", s.Name, blocker)
					progressed = true
				case running < e.r.parallelism():
					running++
					e.update(ctx, s.Name, func(r *artifacts.StepRecord) { r.Status = artifacts.StatusRunning })
					step := e.p.Step(s.Name)
					go func() {
						e.runStep(ctx, step)
						done <- step.Name
					}()
					progressed = true
				}
			}
		}
		if running == 0 {
			return
		}
		<-done
		running--
	}
}

// finish records a step's end.
func (e *execution) finish(ctx context.Context, step, status string, exitCode *int, msg string) {
	end := e.r.now()
	e.update(ctx, step, func(r *artifacts.StepRecord) {
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
	for _, s := range e.run.Steps {
		if s.Status == artifacts.StatusSucceeded {
			continue
		}
		fmt.Fprintf(&b, "  %-12s %s", s.Name, s.Status)
		if s.ExitCode != nil && s.Status == artifacts.StatusFailed {
			fmt.Fprintf(&b, " (exit code %d)", *s.ExitCode)
		}
		if s.Message != "" {
			fmt.Fprintf(&b, ": %s", s.Message)
		}
		b.WriteString("\n")
		if t := e.tails[s.Name]; t != nil && s.Status == artifacts.StatusFailed && len(t.Lines()) > 0 {
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
