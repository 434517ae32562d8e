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
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/runview"
)

// prepared fetches an invocation's inputs into its workspace once, for
// every attempt of a step.
type prepared struct {
	rt     *execution.Runtime
	ws     execution.Workspace
	done   bool
	values components.Placeholders
}

func (p *prepared) prepare(ctx context.Context, inv *components.Invocation) (components.Placeholders, error) {
	if !p.done {
		v, err := p.rt.Prepare(ctx, inv, p.ws)
		if err != nil {
			return v, err
		}
		p.values, p.done = v, true
	}
	return p.values, nil
}

// Process runs a step's program as one child process in the component's
// run directory: a local step, or a step pod's program.
type Process struct {
	prepared
	// Env is the base environment (the process's when nil).
	Env []string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// GracePeriod is the time between SIGTERM and SIGKILL when ctx ends.
	GracePeriod time.Duration
	// OutputParams, when set, is where the output parameters are written
	// for Argo.
	OutputParams string
	// PodName, when set, is {{pod.name}} (in a pod; locally it is RUN-STEP).
	PodName string
	// Timing, when set, is told when the inputs were ready, the program
	// started and ended, and the outputs were published.
	Timing *record.StepTiming
}

// NewProcess returns a Process whose invocation's inputs and outputs are in
// the workspace directory work.
func NewProcess(store artifacts.Store, work string) *Process {
	return &Process{prepared: prepared{rt: &execution.Runtime{Store: store}, ws: execution.Workspace{Dir: work}}}
}

// Run runs the program once and publishes its outputs.
func (p *Process) Run(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error) {
	if p.PodName != "" {
		inv.Pod = p.PodName
	}
	values, err := p.prepare(ctx, inv)
	if err != nil {
		return nil, 0, err
	}
	if p.Timing != nil {
		p.Timing.InputsReady = time.Now()
	}
	records, err := p.rt.RunOnce(ctx, inv, p.ws, values, execution.Options{
		Dir: inv.Component.RunDir(), Env: inv.Environ(p.Env), Stdout: p.Stdout, Stderr: p.Stderr, GracePeriod: p.GracePeriod,
		Timing: p.Timing,
	})
	if err != nil {
		return nil, 1, err
	}
	if p.OutputParams != "" {
		if err := execution.WriteOutputParams(p.OutputParams, records); err != nil {
			return records, 1, err
		}
	}
	return records, 1, nil
}

// Gang runs a distributed step's ranks as processes on this machine
// (package gang), restarting the whole gang up to MaxRestarts times, and
// publishes rank 0's outputs.
type Gang struct {
	prepared
	// Nodes, ProcsPerNode and MaxRestarts shape the gang.
	Nodes, ProcsPerNode, MaxRestarts int
	// Framework chooses the rank environment ("" is torch).
	Framework rankenv.Framework
	// Env is the base environment (the process's when nil).
	Env []string
	// Output returns the writer of the lines of a rank, prefixed.
	Output func(prefix string) io.Writer
	// Log receives the gang's own lines ("pipectl: …").
	Log io.Writer
	// GracePeriod is the time between SIGTERM and SIGKILL when the gang stops.
	GracePeriod time.Duration
	// StallTimeout, when set, restarts a gang none of whose ranks made
	// progress for that long (gang.Gang.StallTimeout).
	StallTimeout time.Duration
	// Ended, when set, is told of every gang attempt that did not succeed,
	// numbered across the step's retries.
	Ended func(record.GangAttempt)
	// Progress, when set, is given the ranks' metrics series as it grows.
	Progress func(record.Progress)
	// Checkpoint, when set, keeps the ranks' checkpoint directory across
	// gang attempts and retries, stored every CheckpointEvery while the gang
	// runs (gang.Gang.Checkpoint).
	Checkpoint      gang.Checkpointer
	CheckpointEvery time.Duration

	attempts int // the gang attempts of earlier Runs (retries)
}

// NewGang returns a Gang whose invocation's inputs and outputs are in the
// workspace directory work.
func NewGang(store artifacts.Store, work string) *Gang {
	return &Gang{prepared: prepared{rt: &execution.Runtime{Store: store}, ws: execution.Workspace{Dir: work}}}
}

// CheckpointDir is the ranks' checkpoint directory in the workspace.
func (g *Gang) CheckpointDir() string { return g.ws.CheckpointDir() }

// Run runs the gang until it succeeds or runs out of restarts, then
// publishes rank 0's outputs.
func (g *Gang) Run(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error) {
	values, err := g.prepare(ctx, inv)
	if err != nil {
		return nil, 0, err
	}
	env := inv.Environ(g.Env)
	argvFor := func(rank int) ([]string, []string, error) {
		v, err := g.rt.ForRank(inv, g.ws, values, rank)
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
	procs := g.ProcsPerNode
	// The component env is resolved for rank 0; per-rank output paths in
	// env values would all name rank 0's, which only rank 0 publishes anyway.
	_, cenv, err := argvFor(0)
	if err != nil {
		return nil, 0, err
	}
	outs := map[int]io.Writer{}
	gg := &gang.Gang{
		Nodes: g.Nodes, ProcsPerNode: procs, MaxRestarts: g.MaxRestarts, Framework: g.Framework,
		Dir: inv.Component.RunDir(), GracePeriod: g.GracePeriod,
		Argv: func(node, local int) ([]string, error) {
			argv, _, err := argvFor(node*procs + max(local, 0))
			return argv, err
		},
		Output: func(rank int) io.Writer {
			if w, ok := outs[rank]; ok {
				return w
			}
			outs[rank] = g.Output(fmt.Sprintf("[%s rank %d] ", inv.Step, rank))
			return outs[rank]
		},
		Logf:         func(format string, args ...any) { fmt.Fprintf(g.Log, "pipectl: "+format+"\n", args...) },
		StallTimeout: g.StallTimeout, MetricsDir: g.ws.MetricsDir(), Progress: g.progress(),
		Checkpoint: g.Checkpoint, CheckpointEvery: g.CheckpointEvery,
	}
	if g.Ended != nil {
		before := g.attempts
		gg.Ended = func(a record.GangAttempt) {
			a.Attempt += before
			g.Ended(a)
		}
	}
	gg.Env = append(append([]string{}, env...), cenv...)
	if g.Framework == rankenv.MPI {
		fmt.Fprintf(g.Log, "pipectl: starting the mpi launcher: %d slot(s) for %d node(s) × %d process(es) per node\n", g.Nodes*procs, g.Nodes, procs)
	} else {
		fmt.Fprintf(g.Log, "pipectl: starting %d rank(s): %d node(s) × %d process(es) per node\n", g.Nodes*procs, g.Nodes, procs)
	}
	n, err := gg.Run(ctx)
	g.attempts += n
	if err != nil {
		return nil, n, err
	}
	records, err := g.rt.Publish(ctx, inv, g.ws)
	return records, n, err
}

// ProgressLogInterval is how often at most a gang's log says how far its
// ranks got (their last reported step and metrics).
const ProgressLogInterval = 30 * time.Second

// progress hands the ranks' metrics to g.Progress and, at most every
// ProgressLogInterval, says in the step's log how far they got.
func (g *Gang) progress() func(record.Progress) {
	var logged time.Time
	return func(p record.Progress) {
		if g.Progress != nil {
			g.Progress(p)
		}
		if sum := runview.ProgressSummary(&p); sum != "" && time.Since(logged) >= ProgressLogInterval {
			fmt.Fprintf(g.Log, "pipectl: progress: %s\n", sum)
			logged = time.Now()
		}
	}
}

// Node runs one node of a distributed step in its rank pod (gang.ExecNode),
// its place in the gang read from the pod's rank env; node 0 publishes.
// Errors no restart can heal are *gang.ConfigError.
type Node struct {
	Runtime *execution.Runtime
	// Request is the pod's exec request; its Invocation is set by Run.
	Request execution.Request
	// Getenv reads the rank env (os.Getenv when nil).
	Getenv func(string) string
}

// Run runs the node's rank processes.
func (n *Node) Run(ctx context.Context, inv *components.Invocation) ([]record.OutputRecord, int, error) {
	getenv := n.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	node, err := rankenv.NodeFromEnv(getenv)
	if err != nil {
		return nil, 0, &gang.ConfigError{Err: err}
	}
	req := n.Request
	req.Invocation = inv
	records, err := gang.ExecNode(ctx, n.Runtime, req, node)
	return records, 1, err
}
