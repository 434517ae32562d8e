package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// program is a Strategy that fails its first fails runs, then publishes
// one output parameter; it counts its runs.
type program struct {
	fails, runs int
	log         io.Writer
}

func (p *program) Run(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error) {
	p.runs++
	fmt.Fprintf(p.log, "run %d of %s", p.runs, inv.Step) // no newline: Flush ends the line
	if p.runs <= p.fails {
		return nil, 1, &process.ExitError{Code: 3}
	}
	v := "42"
	return []record.OutputRecord{{Name: "answer", Type: "int", Value: &v}}, 1, nil
}

func newJob(t *testing.T, store artifacts.Store, p *program) *Job {
	t.Helper()
	log, err := NewLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(log.Close)
	p.log = log
	inv := &components.Invocation{Run: "r1", Step: "train", Component: &components.Program{Command: []string{"true"}}}
	return &Job{
		Run: "r1", Name: "train", Invocation: inv, Cache: wire.CacheOn, Strategy: p, Log: log,
		Flush: func() { fmt.Fprintln(log) },
	}
}

// TestExecuteCache: a step runs once and records its cache entry; the same
// step again is reused, its program not run, and says so.
func TestExecuteCache(t *testing.T) {
	ctx := context.Background()
	store, _ := artifacts.NewLocal(t.TempDir())
	p := &program{}
	res, err := (&Executor{Store: store}).Execute(ctx, newJob(t, store, p))
	if err != nil || res.Cached || res.Attempts != 1 || res.Fingerprint == "" || len(res.Outputs) != 1 {
		t.Fatalf("first Execute = %+v, %v; want one run and a fingerprint", res, err)
	}
	b, err := readAll(ctx, store, record.LogKey("r1", "train"))
	if err != nil || string(b) != "run 1 of train\n" {
		t.Errorf("kept log = %q, %v; want the program's line, flushed", b, err)
	}

	j := newJob(t, store, p)
	j.Run = "r2"
	var told string
	j.Cached = func(hit stepcache.Entry) { told = hit.Run }
	res, err = (&Executor{Store: store}).Execute(ctx, j)
	if err != nil || !res.Cached || res.Hit.Run != "r1" || told != "r1" || p.runs != 1 {
		t.Fatalf("second Execute = %+v, %v (told %q, %d runs); want r1's outputs reused, no run", res, err, told, p.runs)
	}
	if _, err := readAll(ctx, store, record.LogKey("r2", "train")); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("a reused step's log was kept without KeepCachedLog: %v", err)
	}

	j = newJob(t, store, p)
	j.Run, j.Cache = "r3", wire.CacheOff
	if res, err = (&Executor{Store: store}).Execute(ctx, j); err != nil || res.Cached || res.Fingerprint != "" || p.runs != 2 {
		t.Errorf("Execute with the cache off = %+v, %v; want a run, no fingerprint", res, err)
	}
}

// TestExecuteRetries: a failing attempt is retried and said on RetryLog;
// the attempts add up.
func TestExecuteRetries(t *testing.T) {
	store, _ := artifacts.NewLocal(t.TempDir())
	p := &program{fails: 2}
	j := newJob(t, store, p)
	var said strings.Builder
	j.Retries, j.RetryLog, j.Cache = 2, &said, wire.CacheOff
	res, err := (&Executor{Store: store}).Execute(context.Background(), j)
	if err != nil || res.Attempts != 3 {
		t.Fatalf("Execute = %+v, %v; want success after 3 attempts", res, err)
	}
	if !strings.Contains(said.String(), "attempt 2 failed (exit code 3); retrying (2 of 2)") {
		t.Errorf("retry log = %q", said.String())
	}
	p = &program{fails: 5}
	j = newJob(t, store, p)
	j.Retries, j.Cache = 1, wire.CacheOff
	if _, err := (&Executor{Store: store}).Execute(context.Background(), j); process.ExitCode(err) != 3 || p.runs != 2 {
		t.Errorf("Execute out of retries = %v after %d runs; want exit code 3 after 2", err, p.runs)
	}
	// A program that could not start (its inputs not fetched) is not retried.
	calls := 0
	j.Strategy = StrategyFunc(func(context.Context, *components.Invocation) ([]record.OutputRecord, int, error) {
		calls++
		return nil, 0, errors.New("fetch input data: no such object")
	})
	j.Retries = 3
	if _, err := (&Executor{Store: store}).Execute(context.Background(), j); err == nil || calls != 1 {
		t.Errorf("Execute of a program that never started = %v after %d calls; want its error after 1", err, calls)
	}
}

// TestExecuteTimeout: an attempt that outlives the timeout fails with exit
// code 124.
func TestExecuteTimeout(t *testing.T) {
	store, _ := artifacts.NewLocal(t.TempDir())
	j := newJob(t, store, &program{})
	j.Cache, j.Timeout = wire.CacheOff, 10*time.Millisecond
	j.Strategy = StrategyFunc(func(ctx context.Context, _ *components.Invocation) ([]record.OutputRecord, int, error) {
		<-ctx.Done()
		return nil, 1, ctx.Err()
	})
	_, err := (&Executor{Store: store}).Execute(context.Background(), j)
	if process.ExitCode(err) != 124 || !strings.Contains(fmt.Sprint(err), "timed out after 10ms") {
		t.Errorf("Execute = %v; want a timeout with exit code 124", err)
	}
}

func readAll(ctx context.Context, s artifacts.Store, key string) ([]byte, error) {
	r, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
