package gang

import (
	"context"
	"fmt"
	"io"
	"sync"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// startNodeCheckpoint gives a rank pod the step's checkpoint directory, as
// a local gang has it (the same Keeper and sync loop, kept as opts say):
// restored from the store before the node's processes start (on every
// node: each pod has its own directory), and on node 0, whose rank 0
// writes it, stored every opts.Interval() and when the processes exited
// (stop; once, however often it is called). It returns the directory's
// variable.
func startNodeCheckpoint(ctx context.Context, rt *execution.Runtime, inv *components.Invocation, ws execution.Workspace, opts checkpoint.Options, node rankenv.Node, log io.Writer) (env string, stop func(), err error) {
	g := &Gang{
		Checkpoint:      opts.Keeper(rt.Store, inv.Run, inv.Step, ws.CheckpointDir()),
		CheckpointEvery: opts.Interval(),
		Logf:            func(format string, args ...any) { fmt.Fprintf(log, wire.RuntimeLinePrefix+format+"\n", args...) },
	}
	if err := g.prepareCheckpoint(ctx); err != nil {
		return "", nil, err
	}
	env = wire.EnvCheckpointDir + "=" + ws.CheckpointDir()
	if node.Index != 0 {
		return env, func() {}, nil
	}
	loop := g.startCheckpoints(ctx)
	var once sync.Once
	return env, func() { once.Do(func() { loop.stop(ctx, g) }) }, nil
}
