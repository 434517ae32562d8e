package gang

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// ConfigError is a failure of a rank that no restart can heal; `pipectl
// exec --gang` exits with jobset.ExitConfig on it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExecNode runs one node of a distributed step in its rank pod: it fetches
// the inputs and runs the node's rank processes (one; or, with more
// processes per node and a command other than torchrun, ProcsPerNode of
// them with their RANK and LOCAL_RANK, all stopped when one fails). Only
// global rank 0 writes to the step's output paths; the other ranks' outputs
// go to throw-away paths. On node 0, once every process exited 0, the
// outputs are published (with the step's outputs record), and the output
// parameters written to req.OutputParams when set. Each rank process gets
// its PIPECTL_METRICS, a file in the workspace's metrics directory, read
// back and echoed to the pod's log as the rank's progress (echoMetrics),
// and PIPECTL_CHECKPOINT_DIR (startNodeCheckpoint). With MPI every node
// serves mpirun's daemons (startMPIAgent). Errors that no restart heals
// are *ConfigError; a failed rank gives a *RankError wrapping a
// *components.ExitError.
func ExecNode(ctx context.Context, rt *execution.Runtime, req execution.Request, node rankenv.Node) ([]record.OutputRecord, error) {
	inv := req.Invocation
	ws := execution.Workspace{Dir: req.WorkDir}
	values, err := rt.Prepare(ctx, inv, ws)
	if err != nil {
		return nil, err
	}
	c := inv.Component // after Prepare: in a pod, the program's folder is the code pack
	env := inv.Environ(req.Env)
	procs := max(node.ProcsPerNode, 1)
	type proc struct {
		rank int
		argv []string
		env  []string
	}
	var ps []proc
	// Every rank has its metrics file, as in a local gang, so that a
	// program that reports metrics runs the same on both backends.
	if err := os.MkdirAll(ws.MetricsDir(), 0o755); err != nil {
		return nil, err
	}
	ckptEnv, saveCheckpoint, err := startNodeCheckpoint(ctx, rt, inv, ws, req.Checkpoint, node, req.Stderr)
	if err != nil {
		return nil, err
	}
	defer saveCheckpoint()
	add := func(rank int, extra []string) error {
		extra = append(slices.Clip(extra), wire.EnvMetrics+"="+filepath.Join(ws.MetricsDir(), MetricsFile(rank)), ckptEnv)
		v, err := rt.ForRank(inv, ws, values, rank)
		if err != nil {
			return err
		}
		argv, err := c.Argv(v)
		if err != nil {
			return &ConfigError{Err: err}
		}
		cenv, err := c.Environ(v)
		if err != nil {
			return &ConfigError{Err: err}
		}
		ps = append(ps, proc{rank: rank, argv: argv, env: append(append(append([]string{}, env...), extra...), cenv...)})
		return nil
	}
	first := node.Index * procs
	if procs == 1 || node.PerNode(append(append([]string{}, c.Command...), c.Args...)) {
		// The pod's env has the contract: the whole of it for one process
		// per pod, the node's part for torchrun, JAX or mpirun.
		if err := add(first, nil); err != nil {
			return nil, err
		}
	} else {
		for local := 0; local < procs; local++ {
			if err := add(first+local, node.RankEnv(node.Index, local)); err != nil {
				return nil, err
			}
		}
	}
	if node.Framework == rankenv.MPI {
		// Every node pod serves mpirun's daemons; node 0 (the launcher)
		// runs the command, the others serve until the Job ends.
		stop, err := startMPIAgent(ctx, node, ps[0].env, c.RunDir(), req.Stderr)
		if err != nil {
			return nil, err
		}
		defer stop()
		if node.Index != 0 {
			<-ctx.Done()
			return nil, nil
		}
	}
	var mu sync.Mutex
	ranks := make([]int, len(ps))
	for i, p := range ps {
		ranks[i] = p.rank
	}
	stopEcho := echoMetrics(ws.MetricsDir(), ranks, &mu, req.Stderr)
	defer stopEcho()
	var writers []*process.LineWriter
	set := newProcSet(len(ps), grace(req.GracePeriod))
	defer set.close()
	var failed error
	for _, p := range ps {
		stdout, stderr := req.Stdout, req.Stderr
		if len(ps) > 1 {
			// Several ranks share the pod's log: each line says whose it is.
			lw := process.NewLineWriter(&mu, fmt.Sprintf("[rank %d] ", p.rank), nil, req.Stdout)
			writers = append(writers, lw)
			stdout, stderr = lw, lw
		}
		if failed = set.start(p.rank, process.Process{Argv: p.argv, Dir: c.RunDir(), Env: p.env, Stdout: stdout, Stderr: stderr}); failed != nil {
			set.stop()
			break
		}
	}
	if failed == nil {
		failed = set.wait(ctx, nil)
	}
	stopEcho()
	for _, w := range writers {
		w.Flush()
	}
	saveCheckpoint() // before the outputs are published: a later attempt sees the last checkpoint
	if failed != nil {
		return nil, failed
	}
	if node.Index != 0 {
		return nil, nil
	}
	return publishNode(ctx, rt, req, ws)
}

// publishNode publishes node 0's outputs, with the step's outputs record,
// and writes the output parameters to req.OutputParams when set.
func publishNode(ctx context.Context, rt *execution.Runtime, req execution.Request, ws execution.Workspace) ([]record.OutputRecord, error) {
	records, err := rt.Publish(ctx, req.Invocation, ws)
	if err != nil {
		var mo *execution.MissingOutputError
		if errors.As(err, &mo) {
			return nil, &ConfigError{Err: err}
		}
		return nil, err
	}
	if req.OutputParams != "" {
		if err := execution.WriteOutputParams(req.OutputParams, records); err != nil {
			return records, err
		}
	}
	return records, nil
}

func grace(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return process.DefaultGracePeriod
}
