package gang

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/progress"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// Gang runs the ranks of a distributed step as local processes: Nodes ×
// ProcsPerNode rank processes wired with the rank environment, or, when the
// command is torchrun or the framework JAX, one process per node (torchrun
// spawns its local ranks), or, with MPI, node 0's process alone.
// When any process fails, the others are stopped; the whole gang then
// restarts, up to MaxRestarts times.
type Gang struct {
	// Nodes and ProcsPerNode shape the gang.
	Nodes, ProcsPerNode int
	// Framework chooses the rank environment and which processes run
	// (rankenv.Framework; "" is torch). With MPI only node 0's process runs,
	// given a hostfile naming this machine with every rank's slot.
	Framework rankenv.Framework
	// MaxRestarts bounds the restarts after a failed attempt.
	MaxRestarts int
	// Argv returns the argv of the process of node node, local rank local
	// (local is -1 for a torchrun process that spawns the whole node). The
	// process of global rank 0 is the one that publishes outputs.
	Argv func(node, local int) ([]string, error)
	// Dir and Env are every process's working directory and base environment.
	Dir string
	Env []string
	// Output returns where the process of rank (global rank; node*P for a
	// torchrun node process) writes its stdout and stderr.
	Output func(rank int) io.Writer
	// Port is MASTER_PORT; 0 picks a free loopback port for each attempt.
	Port int
	// GracePeriod is the time between SIGTERM and SIGKILL when the gang is stopped.
	GracePeriod time.Duration
	// Logf reports gang events (a rank failed, a restart).
	Logf func(format string, args ...any)
	// StallTimeout, when set, stops an attempt in which no rank made
	// progress (printed a line, reported a metric) for that long: a
	// *StallError, restarted like a failure.
	StallTimeout time.Duration
	// MetricsDir, when set, holds each rank's metrics file (its
	// PIPECTL_METRICS): rank-R.jsonl, emptied when an attempt starts.
	MetricsDir string
	// Ended, when set, is told of every attempt that did not succeed.
	Ended func(record.GangAttempt)
	// Progress, when set, is given the ranks' metrics series as it grows
	// (at most every few seconds) and when an attempt ends.
	Progress func(record.Progress)
	// Checkpoint, when set, keeps the ranks' checkpoint directory
	// (PIPECTL_CHECKPOINT_DIR): restored before every attempt, saved every
	// CheckpointEvery while it runs and when it ends.
	Checkpoint      Checkpointer
	CheckpointEvery time.Duration
}

// RankError says which rank failed a gang attempt and how.
type RankError struct {
	Rank int
	Err  error
}

func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *RankError) Unwrap() error { return e.Err }

// Run runs the gang until it succeeds, fails more than MaxRestarts times,
// or ctx ends. It returns the number of attempts made and nil, the
// *RankError of the last failed attempt, or ctx's error.
func (g *Gang) Run(ctx context.Context) (attempts int, err error) {
	logf := g.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	tr := progress.NewTracker(0, nil)
	for attempt := 1; ; attempt++ {
		err := g.attempt(ctx, attempt, tr)
		if ctx.Err() != nil {
			return attempt, ctx.Err()
		}
		if err == nil {
			return attempt, nil
		}
		var ce *ConfigError
		restart := attempt <= g.MaxRestarts && !errors.As(err, &ce) // no restart heals a bad command
		if g.Ended != nil {
			g.Ended(AttemptRecord(attempt, err, restart))
		}
		why := fmt.Sprintf("failed (%v)", err)
		var se *StallError
		if errors.As(err, &se) {
			why = "stalled"
			LogStall(logf, attempt, se)
		}
		if !restart {
			return attempt, err
		}
		logf("gang attempt %d %s; restarting all %d ranks (restart %d of %d)", attempt, why, g.Nodes*g.procs(), attempt, g.MaxRestarts)
	}
}

func (g *Gang) procs() int {
	if g.ProcsPerNode < 1 {
		return 1
	}
	return g.ProcsPerNode
}

type rankResult struct {
	rank int
	pid  int
	err  error
	at   time.Time
}

// failureWindow is how long a gang attempt keeps collecting exits after the
// first failure before it names the rank that failed: when one rank dies
// its peers fail too (a closed connection), and their exits may be reaped
// first. The rank that exited earliest, by the kernel's exit order, is named.
const failureWindow = 250 * time.Millisecond

// attempt starts every process and waits for all to succeed, for the
// first failure or, with a stall timeout, for the gang to stall.
func (g *Gang) attempt(ctx context.Context, attempt int, tr *progress.Tracker) error {
	port := g.Port
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			return err
		}
		port = p
	}
	topo := rankenv.Topology{Nodes: g.Nodes, ProcsPerNode: g.procs(), MasterAddr: "127.0.0.1", MasterPort: port, Framework: g.Framework, Local: true}
	if g.Framework == rankenv.MPI {
		dir, err := os.MkdirTemp("", "pipectl-mpi-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		topo.Hostfile = filepath.Join(dir, "hostfile")
		if err := os.WriteFile(topo.Hostfile, []byte(topo.HostfileOf([]string{"localhost"})), 0o644); err != nil {
			return err
		}
	}
	perNode, torchrun := false, false
	if argv, err := g.Argv(0, 0); err == nil {
		perNode = topo.PerNode(argv)
		// pipectl is torchrun here: it starts the workers itself.
		if torchrun = perNode && topo.Framework != rankenv.JAX && topo.Framework != rankenv.MPI && rankenv.IsTorchrun(argv); torchrun {
			perNode = false
		}
	}
	if err := g.prepareCheckpoint(ctx); err != nil {
		return err
	}
	ckpt := g.startCheckpoints(ctx)
	defer ckpt.stop(ctx, g)
	ps := newProcSet(g.Nodes*g.procs(), g.grace())
	defer ps.close()
	ranks := g.ranks(topo, perNode)
	tr.Begin(attempt, ranks)
	metrics, err := g.metricsFiles(ranks)
	if err != nil {
		return err
	}
	start := func(rank, node, local int, env []string) error {
		argv, err := g.Argv(node, local)
		if err != nil {
			return err
		}
		if torchrun {
			if argv, err = torchrunWorker(argv, topo); err != nil {
				return err
			}
			env = append(env, topo.WorkerEnv(node, local, attempt-1)...)
		}
		out := tr.Writer(rank, g.Output(rank))
		env = append(append([]string{}, g.Env...), env...)
		if path := metrics[rank]; path != "" {
			env = append(env, wire.EnvMetrics+"="+path)
		}
		if g.Checkpoint != nil {
			env = append(env, wire.EnvCheckpointDir+"="+g.Checkpoint.Directory())
		}
		return ps.start(rank, process.Process{Argv: argv, Dir: g.Dir, Env: env, Stdout: out, Stderr: out, Guard: process.GuardFrom(ctx)})
	}
	w := startWatch(ctx, tr, progress.NewFiles(metrics), g.StallTimeout, g.Progress)
	defer w.stop()
	for node := 0; node < g.Nodes && topo.Runs(node); node++ {
		if perNode {
			if err := start(node*topo.ProcsPerNode, node, -1, topo.NodeEnv(node)); err != nil {
				ps.stop()
				return err
			}
			continue
		}
		for local := 0; local < topo.ProcsPerNode; local++ {
			if err := start(node*topo.ProcsPerNode+local, node, local, topo.RankEnv(node, local)); err != nil {
				ps.stop()
				return err
			}
		}
	}
	return ps.wait(ctx, w.stalled)
}

// ranks are the global ranks of the gang's processes: every rank of each
// node that runs (with MPI node 0 alone), or the first of each node for
// processes that stand for their whole node (torchrun, JAX).
func (g *Gang) ranks(topo rankenv.Topology, perNode bool) []int {
	var out []int
	for node := 0; node < g.Nodes && topo.Runs(node); node++ {
		for local := 0; local < g.procs(); local++ {
			out = append(out, node*g.procs()+local)
			if perNode {
				break
			}
		}
	}
	return out
}

// metricsFiles are the PIPECTL_METRICS of each process of an attempt, by
// rank (none without MetricsDir): rank-R.jsonl, emptied for each attempt
// (a rank pod's are named the same: see ExecNode).
func (g *Gang) metricsFiles(ranks []int) (map[int]string, error) {
	out := map[int]string{}
	if g.MetricsDir == "" {
		return out, nil
	}
	if err := os.MkdirAll(g.MetricsDir, 0o755); err != nil {
		return nil, err
	}
	for _, r := range ranks {
		out[r] = filepath.Join(g.MetricsDir, MetricsFile(r))
		if err := os.Remove(out[r]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// MetricsFile is the name of rank's metrics file in its metrics directory.
func MetricsFile(rank int) string { return fmt.Sprintf("rank-%d.jsonl", rank) }

// procSet runs the rank processes of one gang attempt, or of one node: all
// must exit 0; at the first failure the others are stopped and the rank that
// failed first is named.
type procSet struct {
	grace   time.Duration
	order   *process.ExitOrder // nil where the kernel cannot tell
	running []*process.Running
	results chan rankResult
}

// newProcSet returns a set for at most n processes.
func newProcSet(n int, grace time.Duration) *procSet {
	s := &procSet{grace: grace, results: make(chan rankResult, n)}
	if order, err := process.NewExitOrder(); err == nil {
		s.order = order
	}
	return s
}

// start starts the process of rank p.
func (s *procSet) start(rank int, p process.Process) error {
	p.Order = s.order
	r, err := process.Start(p)
	if err != nil {
		return &RankError{Rank: rank, Err: err}
	}
	s.running = append(s.running, r)
	go func() {
		<-r.Done()
		s.results <- rankResult{rank: rank, pid: r.Pid(), err: r.Err(), at: r.ExitedAt()}
	}()
	return nil
}

// wait waits until every process exited 0 (nil), one failed (the
// *RankError of the first to fail, the others stopped), an error came on
// stalled (it, every process stopped; stalled may be nil) or ctx ended
// (its error, every process stopped).
func (s *procSet) wait(ctx context.Context, stalled <-chan error) error {
	for left := len(s.running); left > 0; left-- {
		select {
		case err := <-stalled:
			s.stop()
			return err
		case res := <-s.results:
			if res.err != nil {
				first := firstFailure(s.order, res, s.results, left-1)
				s.stop()
				return &RankError{Rank: first.rank, Err: first.err}
			}
		case <-ctx.Done():
			s.stop()
			return ctx.Err()
		}
	}
	return nil
}

// stop stops every process (SIGTERM, SIGKILL after the grace period) and
// waits for them.
func (s *procSet) stop() {
	for _, r := range s.running {
		go r.Stop(s.grace)
	}
	for _, r := range s.running {
		<-r.Done()
	}
}

func (s *procSet) close() {
	if s.order != nil {
		s.order.Close()
	}
}

// firstFailure collects the exits that follow a failure within
// failureWindow (at most left of them) and returns the earliest failure: by
// the kernel's exit order when order knows both, else by exit timestamp.
func firstFailure(order *process.ExitOrder, failed rankResult, results <-chan rankResult, left int) rankResult {
	timer := time.NewTimer(failureWindow)
	defer timer.Stop()
	earlier := func(a, b rankResult) bool {
		if order != nil {
			pa, oka := order.Position(a.pid)
			pb, okb := order.Position(b.pid)
			if oka && okb {
				return pa < pb
			}
		}
		return a.at.Before(b.at)
	}
	for ; left > 0; left-- {
		select {
		case res := <-results:
			if res.err != nil && earlier(res, failed) {
				failed = res
			}
		case <-timer.C:
			return failed
		}
	}
	return failed
}

func (g *Gang) grace() time.Duration {
	if g.GracePeriod > 0 {
		return g.GracePeriod
	}
	return process.DefaultGracePeriod
}

// FreePort returns a TCP port, free on every interface right now, for a
// local gang's rendezvous (see rendezvousPort): outside the kernel's
// ephemeral range, so no outgoing connection is given it between this
// check and rank 0's bind seconds later (after importing torch).
func FreePort() (int, error) {
	return rendezvousPort(ephemeralRange())
}

// torchrunWorker is the worker process torchrun command argv would start
// on each rank of topo: locally pipectl starts them itself (one torchrun
// per node would need PyTorch's launcher to work with this Python).
func torchrunWorker(argv []string, topo rankenv.Topology) ([]string, error) {
	w, err := rankenv.TorchrunWorker(argv, topo)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return w, nil
}
