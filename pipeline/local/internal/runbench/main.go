// Command runbench measures the local runner at scale and prints each
// figure beside its goal: runs of 500, 2000 and 10,000 independent trivial
// steps (`true`), the growth from 500 to 2000 steps, the time a cancelled
// large run takes to end, and the per-step overhead over spawning the
// process, on a chain of 200 steps.
//
//	go run ./pipeline/local/internal/runbench [-max 10000] [-parallelism 0]
//
// Each run uses a fresh local store; caching is on, as for a user (every
// step is distinct, so each misses the cache and writes its entry).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/local"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

type options struct {
	max, parallelism int
}

func run() error {
	var o options
	flag.IntVar(&o.max, "max", 10000, "the largest run's number of steps")
	flag.IntVar(&o.parallelism, "parallelism", 0, "steps at once (0: the number of CPUs)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "runbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tresult\tgoal\t")
	times := map[int]time.Duration{}
	for _, n := range []int{500, 2000, o.max} {
		if _, ok := times[n]; ok || n <= 0 {
			continue
		}
		d, err := timeRun(context.Background(), dir, o, independent(n))
		if err != nil {
			return err
		}
		times[n] = d
		goal := ""
		if n == 10000 {
			goal = "< 3m0s on 2 cores"
		}
		fmt.Fprintf(tw, "%d independent steps\t%s\t%s\t\n", n, d.Round(time.Millisecond), goal)
	}
	fmt.Fprintf(tw, "t(2000) / t(500)\t%.2f\t≤ 4.5\t\n", float64(times[2000])/float64(times[500]))

	cancelled, err := timeCancel(dir, o, independent(o.max))
	if err != nil {
		return err
	}
	fmt.Fprintf(tw, "end of a %d-step run after cancel\t%s\t≤ 5s\t\n", o.max, cancelled.Round(time.Millisecond))

	const chainLen = 200
	chain, err := timeRun(context.Background(), dir, o, chainOf(chainLen))
	if err != nil {
		return err
	}
	spawn, err := timeSpawn(chainLen)
	if err != nil {
		return err
	}
	fmt.Fprintf(tw, "chain of %d: run\t%s\t\t\n", chainLen, chain.Round(time.Millisecond))
	fmt.Fprintf(tw, "chain of %d: spawning true alone\t%s\t\t\n", chainLen, spawn.Round(time.Millisecond))
	fmt.Fprintf(tw, "per-step overhead over the spawn\t%s\t≤ 5ms\t\n", ((chain - spawn) / chainLen).Round(10*time.Microsecond))
	return tw.Flush()
}

// independent is a pipeline of n independent steps running true.
func independent(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: bench}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: s%d, component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: t}, command: [true, '%d']}}\n", i, i)
	}
	return b.String()
}

// chainOf is a pipeline of n steps running true, each after the previous.
func chainOf(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: chain}\nsteps:\n")
	for i := range n {
		after := ""
		if i > 0 {
			after = fmt.Sprintf(", after: [s%d]", i-1)
		}
		fmt.Fprintf(&b, "  - {name: s%d%s, component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: t}, command: [true, '%d']}}\n", i, after, i)
	}
	return b.String()
}

// runner loads yaml and returns a runner on a fresh store below dir.
func runner(dir string, o options, yaml string) (*local.Runner, *pipeline.Pipeline, map[string]string, error) {
	work, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		return nil, nil, nil, err
	}
	file := filepath.Join(work, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		return nil, nil, nil, err
	}
	p, err := pipeline.Load(file)
	if err != nil {
		return nil, nil, nil, err
	}
	params, err := p.ResolveParams(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	store, err := artifacts.NewLocal(filepath.Join(work, "store"))
	if err != nil {
		return nil, nil, nil, err
	}
	r := &local.Runner{Store: store, Parallelism: o.parallelism, Logs: io.Discard, Status: io.Discard, WorkDir: filepath.Join(work, "work")}
	return r, p, params, nil
}

func timeRun(ctx context.Context, dir string, o options, yaml string) (time.Duration, error) {
	r, p, params, err := runner(dir, o, yaml)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := r.Run(ctx, p, params); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// timeCancel starts a run, cancels it after a second and returns how long
// the run took to end after that.
func timeCancel(dir string, o options, yaml string) (time.Duration, error) {
	r, p, params, err := runner(dir, o, yaml)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	go func() {
		time.Sleep(time.Second)
		cancelled = time.Now()
		cancel()
	}()
	_, err = r.Run(ctx, p, params)
	if end := time.Now(); !cancelled.IsZero() {
		var rerr *local.RunError
		if !errors.As(err, &rerr) || rerr.Run.Status != record.StatusCancelled {
			return 0, fmt.Errorf("cancelled run: %v, want a Cancelled run", err)
		}
		return end.Sub(cancelled), nil
	}
	return 0, errors.New("the run ended before it was cancelled: raise -max")
}

// timeSpawn runs true n times, one after the other, as the runner does.
func timeSpawn(n int) (time.Duration, error) {
	start := time.Now()
	for i := range n {
		p := process.Process{Argv: []string{"true", fmt.Sprint(i)}, Env: os.Environ(), Stdout: io.Discard, Stderr: io.Discard}
		if err := process.Run(context.Background(), p, time.Second); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
