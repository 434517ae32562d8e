package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/inputs"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// A Strategy runs a step's program once and publishes its outputs. It
// returns the outputs and how many times it started the program (a gang's
// restarts within the one run count).
type Strategy interface {
	Run(ctx context.Context, inv *components.Invocation) (records []record.OutputRecord, starts int, err error)
}

// StrategyFunc is a func that is a Strategy.
type StrategyFunc func(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error)

// Run calls f.
func (f StrategyFunc) Run(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error) {
	return f(ctx, inv)
}

// Job is one execution of a step: the step, or one iteration of a loop step.
type Job struct {
	// Run and Name are the run and the step's name in its record (STEP[i]
	// for an iteration).
	Run, Name string
	// Invocation is the step evaluated with its run-time values; it may be
	// nil only when Cache is off and the Strategy needs none.
	Invocation *components.Invocation
	// InputSums are the input artifacts' sha256, by input name, Image the
	// image the step runs in and Shape a distributed step's: with the
	// invocation, they make the fingerprint.
	InputSums map[string]string
	Image     string
	Shape     stepcache.Shape
	// Cache is what the step does with the step cache; with
	// AlwaysFingerprint the step is fingerprinted even when it is off (the
	// local run record shows every step's fingerprint).
	Cache             wire.CacheMode
	AlwaysFingerprint bool
	// OutputParams, when set, is where a reused step's output parameters
	// are written for Argo (the Strategy writes a run step's).
	OutputParams string
	// Strategy runs the program.
	Strategy Strategy
	// Retries and Timeout: the program runs up to 1+Retries times, each
	// attempt bounded by Timeout (0: unbounded); a retry is said on RetryLog.
	// (On Argo, the workflow retries and bounds the step's pod.)
	Retries  int
	Timeout  time.Duration
	RetryLog io.Writer
	// Log, when set, is kept at <run>/<name>/step.log once the step ends
	// (and while it runs, with Log.Live); with KeepCachedLog a reused
	// step's log is kept too.
	Log           *Log
	KeepCachedLog bool
	// Flush, when set, is called once the program ended, before the log
	// is stored (line writers hold a last line without its newline).
	Flush func()

	// Lineage records the step's input artifacts once its program started
	// (recordstore.WriteInputs): not for a rank of a gang, whose launcher
	// records the step.
	Lineage bool
	// Timing, when set, goes into the inputs record (Lineage): when the
	// step pod's runtime did what.
	Timing *record.StepTiming

	// Fingerprinted, when set, is told the fingerprint before the look-up;
	// Cached, when the outputs of hit were reused.
	Fingerprinted func(fp string)
	Cached        func(hit stepcache.Entry)
	// Warnf reports what does not fail the step (a cache entry or log that
	// could not be stored).
	Warnf func(format string, args ...any)
}

// Result is how a Job ended.
type Result struct {
	// Outputs are the step's outputs: its own, or a reused step's.
	Outputs []record.OutputRecord
	// Attempts counts the program's starts (0 when reused).
	Attempts int
	// Fingerprint is the step's ("" with the cache off).
	Fingerprint string
	// Cached says the outputs were reused from Hit.
	Cached bool
	Hit    stepcache.Entry
	// Skipped says the iteration did not run (plan.Wiring.SkipReason).
	Skipped bool
}

// Executor executes jobs against a store.
type Executor struct {
	Store artifacts.Store
}

// Execute runs j: it fingerprints the step (unless its cache is off),
// reuses an earlier step's outputs when the cache is on and has the
// fingerprint, else runs the Strategy (with j's retries and timeout),
// records the cache entry of a step that succeeded, and keeps its log. A
// reused step whose outputs record cannot be written returns its Result
// (Cached) with the error.
func (x *Executor) Execute(ctx context.Context, j *Job) (res Result, err error) {
	// keepLog stores the step's log once: at the latest when Execute
	// returns, alongside the step's records when it ran.
	keepLog := func() {}
	if j.Log != nil {
		stop := j.Log.copyWhileRunning(ctx, x.Store, record.LogKey(j.Run, j.Name))
		var once sync.Once
		keepLog = func() {
			once.Do(func() {
				if j.Flush != nil {
					j.Flush()
				}
				stop()
				if res.Cached && !j.KeepCachedLog {
					return
				}
				x.uploadLog(ctx, j)
			})
		}
		defer keepLog()
	}
	if j.Cache != wire.CacheOff || j.AlwaysFingerprint {
		if res.Fingerprint, err = stepcache.Fingerprint(ctx, j.Invocation, j.InputSums, j.Shape); err != nil {
			return res, fmt.Errorf("fingerprint: %w", err)
		}
		if j.Fingerprinted != nil {
			j.Fingerprinted(res.Fingerprint)
		}
	}
	if j.Cache == wire.CacheOn {
		if hit, ok := stepcache.Lookup(ctx, x.Store, res.Fingerprint); ok {
			res.Cached, res.Hit, res.Outputs = true, hit, hit.Outputs
			if err := stepcache.Reuse(ctx, x.Store, j.Run, j.Name, j.OutputParams, hit); err != nil {
				return res, err
			}
			if j.Cached != nil {
				j.Cached(hit)
			}
			return res, nil
		}
	}
	res.Outputs, res.Attempts, err = x.attempts(ctx, j)
	// The inputs record, the cache entry and the log are written at once;
	// what could not be is said after (and the log stored again to say it).
	var wg sync.WaitGroup
	var inputsErr, cacheErr error
	if j.Lineage && j.Invocation != nil && res.Attempts > 0 {
		// The program read its inputs, whether it then failed or not.
		wg.Go(func() { inputsErr = recordstore.WriteInputs(context.WithoutCancel(ctx), x.Store, j.inputs()) })
	}
	if err == nil && j.Cache != wire.CacheOff {
		entry := stepcache.Entry{Run: j.Run, Step: j.Name, Outputs: res.Outputs}
		wg.Go(func() { cacheErr = stepcache.Record(context.WithoutCancel(ctx), x.Store, res.Fingerprint, entry) })
	}
	wg.Go(keepLog)
	wg.Wait()
	if inputsErr != nil {
		j.warnf("cannot write the inputs record of step %s: %v", j.Name, inputsErr)
	}
	if cacheErr != nil {
		j.warnf("cannot write the cache entry of step %s: %v", j.Name, cacheErr)
	}
	if j.Log != nil && (inputsErr != nil || cacheErr != nil) {
		x.uploadLog(ctx, j)
	}
	return res, err
}

// uploadLog stores what j's log holds, whatever happened, with a context
// of its own (the run's may be cancelled); a failure is a warning.
func (x *Executor) uploadLog(ctx context.Context, j *Job) {
	if err := j.Log.Upload(context.WithoutCancel(ctx), x.Store, record.LogKey(j.Run, j.Name)); err != nil {
		j.warnf("cannot store the log of step %s: %v", j.Name, err)
	}
}

// attempts runs the strategy up to 1+j.Retries times; a failure before the
// program started is not retried.
func (x *Executor) attempts(ctx context.Context, j *Job) ([]record.OutputRecord, int, error) {
	total := 0
	var lastErr error
	for try := 0; try <= j.Retries; try++ {
		if try > 0 && j.RetryLog != nil {
			fmt.Fprintf(j.RetryLog, "pipectl: attempt %d failed (%v); retrying (%d of %d)\n", try, lastErr, try, j.Retries)
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if j.Timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, j.Timeout)
		}
		records, n, err := j.Strategy.Run(actx, j.Invocation)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		total += n
		if err == nil {
			return records, total, nil
		}
		if ctx.Err() != nil {
			return nil, total, ctx.Err()
		}
		if n == 0 && !timedOut {
			// The program never started (its inputs could not be fetched,
			// its argv not built): another attempt would fail the same way.
			return nil, total, err
		}
		if timedOut {
			err = fmt.Errorf("timed out after %s: %w", j.Timeout, &process.ExitError{Code: 124})
		}
		lastErr = err
	}
	return nil, total, lastErr
}

// inputs is the job's inputs record: its input artifacts by name, with
// their sha256 when the fingerprint had them.
func (j *Job) inputs() record.StepInputs {
	rec := record.StepInputs{Run: j.Run, Step: j.Name, Timing: j.Timing}
	for _, name := range slices.Sorted(maps.Keys(j.Invocation.Inputs)) {
		rec.Inputs = append(rec.Inputs, record.InputRecord{Name: name, URI: j.Invocation.Inputs[name], SHA256: j.InputSums[name]})
	}
	// A loop's collected artifacts: NAME[i], iteration i's (their sums
	// are joined by commas in the order of the iterations).
	for _, name := range slices.Sorted(maps.Keys(j.Invocation.Collected)) {
		sums := strings.Split(j.InputSums[name], ",")
		for i, uri := range j.Invocation.Collected[name] {
			in := record.InputRecord{Name: fmt.Sprintf("%s[%d]", name, i), URI: uri}
			if len(sums) == len(j.Invocation.Collected[name]) {
				in.SHA256 = sums[i]
			}
			rec.Inputs = append(rec.Inputs, in)
		}
	}
	return rec
}

func (j *Job) warnf(format string, args ...any) {
	if j.Warnf != nil {
		j.Warnf(format, args...)
	}
}

// ProgramExitCode is the exit code of the program of a step that ended
// with err: 0 when it exited 0 and only its outputs could not be stored.
func ProgramExitCode(err error) int {
	var pe *execution.PublishError
	var mo *execution.MissingOutputError
	if errors.As(err, &pe) || errors.As(err, &mo) {
		return 0 // the program's: the step failed after it
	}
	return process.ExitCode(err)
}

// Invocation evaluates a decoded exec request in a pod: the component (its
// command replaced by the request's Argv), the run-time values with the
// inputs resolved from the producers' outputs records in the store
// (package inputs). It returns the input artifacts' sha256 too, for the
// fingerprint.
func Invocation(ctx context.Context, store artifacts.Store, r *Request) (*components.Invocation, map[string]string, error) {
	c, err := r.Component.WithArgv(r.Argv)
	if err != nil {
		return nil, nil, err
	}
	inv, sums, err := inputs.Invocation(ctx, store, c, r.Wiring, r.Values)
	if err != nil {
		return nil, nil, err
	}
	inv.Image = r.Image
	return inv, sums, nil
}
