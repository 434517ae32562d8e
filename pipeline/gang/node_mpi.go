package gang

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/mpiagent"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// startMPIAgent serves the MPI agent of node (a node pod of an mpi step,
// see package mpiagent): mpirun's daemons run with env (the node's process
// environment) in dir. It returns the function that stops it.
func startMPIAgent(ctx context.Context, node rankenv.Node, env []string, dir string, log io.Writer) (func(), error) {
	base, err := strconv.Atoi(lookup(env, wire.EnvMPIAgentPort))
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("$%s=%q: expected the MPI agents' port (set by pipectl launch)", wire.EnvMPIAgentPort, lookup(env, wire.EnvMPIAgentPort))}
	}
	cfg, err := mpiagent.Config(wire.MPIMountPath, true)
	if err != nil {
		return nil, err
	}
	ln, err := mpiagent.Listen(ctx, base, node.Index)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	a := &mpiagent.Agent{TLS: cfg, Dir: dir, Env: env, Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(log, wire.RuntimeLinePrefix+format+"\n", args...)
	}}
	fmt.Fprintf(log, wire.RuntimeLinePrefix+"node %d of the mpi step: serving mpirun's daemons on %s\n", node.Index, ln.Addr())
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Serve(ctx, ln); err != nil {
			a.Logf("mpi agent: %v", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}, nil
}

// lookup returns the last value of name in env.
func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
