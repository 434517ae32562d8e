// Package launch is `pipectl launch`: the launcher of a compiled pipeline's
// distributed step. It turns the step's plan.Launch into a JobSet, waits on
// it while streaming every rank's log, cleans up, and checks that rank 0's
// outputs reached the artifact store.
package launch

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/internal/podutil/podkube"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher"
)

// Options are the inputs of `pipectl launch`.
type Options struct {
	IO      *podutil.IOStreams
	Factory podkube.Env

	// Args are the wire: what the compiler wrote into the launcher pod,
	// Argv what follows --. With --dry-run -f, Params are the pipeline's
	// parameters (-p name=value) and Step the step's name.
	wire.Args

	// Keep leaves the JobSet after it ended.
	Keep bool

	DryRun bool
	File   string
	Output string
	Image  string

	// Clients connects to the cluster (the kubeconfig's clients; tests replace it).
	Clients func() (launcher.Clients, string, error)
	// Logs, when set, replaces the pods/log API as the rank logs' source (tests).
	Logs launcher.LogSource
	// Signals, when set, replaces SIGINT/SIGTERM of the process (tests).
	Signals <-chan os.Signal
	// RetryInterval and CleanupTimeout tune the launcher (tests).
	RetryInterval, CleanupTimeout time.Duration
}

// NewCmdLaunch returns `pipectl launch`; runF replaces the run function in tests.
func NewCmdLaunch(f podkube.Env, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.Streams(), Factory: f, Clients: f.LauncherClients}
	cmd := &cobra.Command{
		Use:   "launch --run RUN --component B64 --step B64 --distributed B64 [flags]",
		Short: "Run a distributed step as a gang-scheduled JobSet (the launcher pod of a compiled workflow)",
		Long: `Run one distributed step of a run on Kubernetes, as the launcher pod of a
compiled workflow does: build a JobSet of N Indexed rank pods from the step's
launch spec (--distributed), each running 'pipectl exec --gang' with the rank
environment (WORLD_SIZE, RANK, MASTER_ADDR, ..., PET_* for torchrun); create it
(with a PodGroup, or suspended for Kueue, when the step asks for a gang); wait
until it completes or fails while streaming every rank's log with a "[rank N]"
prefix; delete it; and check that rank 0 published every declared output to
the artifact store, writing output parameters to --output-params for Argo.

When not every rank runs within the startup timeout (default 10m without a
gang scheduler), the JobSet is deleted and the launcher fails, naming the
pending ranks and the scheduler's reasons. SIGTERM or SIGINT deletes the JobSet
(foreground) and waits for its pods to go.

--dry-run -f PIPELINE --step STEP prints the JobSet (and PodGroup) the step's
launcher would create, with no cluster access; --step may be left out when the
pipeline has one distributed step (a Kubeflow Trainer TrainJob file has one).

Timings for benchmarks are logged on stderr as
  pipectl launch: timing launch-to-pods-created=DURATION
  pipectl launch: timing terminal-to-exit=DURATION
and, on Linux, the launcher's CPU time (user and system) and peak resident memory
in bytes as
  pipectl launch: usage cpu=DURATION maxrss=BYTES`,
		Example: `  pipectl launch --dry-run -f examples/attrition/pipeline.yaml --step train -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := podutil.CommandAfterDash(cmd, args)
			if err != nil {
				return err
			}
			opts.Argv = argv
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if !opts.DryRun || opts.File == "" {
				if err := podutil.RequireFlags("or --dry-run -f PIPELINE --step STEP", "--run", opts.Run, "--component", opts.Component, "--step", opts.Step, "--distributed", opts.Distributed); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return launchRun(opts)
		},
	}
	fl := cmd.Flags()
	opts.AddFlags(fl, wire.Launch)
	podkube.AddKubeFlags(cmd, f.KubeFlags())
	fl.BoolVar(&opts.Keep, "keep", false, "leave the JobSet in place after it ended (debugging)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the objects it would create and exit")
	fl.StringVarP(&opts.File, "file", "f", "", "with --dry-run: the pipeline file")
	fl.StringVarP(&opts.Output, "output", "o", podutil.FormatYAML, "with --dry-run: json or yaml")
	fl.StringVar(&opts.Image, "image", "pipectl:"+f.PipectlVersion(), "with --dry-run -f: the pipectl image (as pipectl compile --image)")
	return cmd
}

func launchRun(opts *Options) error {
	if opts.DryRun {
		return dryRun(opts)
	}
	cs, req, err := target(opts)
	if err != nil {
		return err
	}
	var stopper podutil.Stopper
	ctx, release := stopper.StopOnSignal(context.Background(), opts.Signals, nil)
	defer release()
	ctx, stop := launcher.Deadline(ctx, req.Launch)
	defer stop()
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	l := &launcher.Launcher{
		Clients: cs, Logs: opts.Logs, Out: opts.IO.Out, ErrOut: opts.IO.ErrOut, Keep: opts.Keep,
		RetryInterval: opts.RetryInterval, CleanupTimeout: opts.CleanupTimeout,
	}
	res, js, err := launcher.Execute(ctx, l, store, req, opts.OutputParams)
	defer func() {
		if d, ok := js.SinceTerminal(); ok {
			fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: timing terminal-to-exit=%s\n", d)
		}
		if cpu, rss, ok := usage(); ok {
			fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: usage cpu=%s maxrss=%d\n", cpu.Round(time.Millisecond), rss)
		}
	}()
	return podutil.StepError(ctx, req.Name, res.Cached, stopper.Signal(), err, "; its JobSet was deleted")
}

// target decodes the flags and connects to the cluster: the namespace is
// -n, else the launcher pod's, else the kubeconfig's; the owner of the
// JobSet is the launcher pod (from the downward API).
func target(opts *Options) (launcher.Clients, *launcher.Request, error) {
	podNS, owner := launcher.InPod(opts.Factory.Env)
	ns := cmp.Or(opts.Factory.KubeFlags().Namespace, podNS)
	// Decode everything before touching the cluster: a bad flag fails fast.
	if _, err := launcher.FromWire(opts.Args, ns, owner); err != nil {
		return launcher.Clients{}, nil, podutil.FlagErrorf("%v", err)
	}
	cs, kubeNS, err := opts.Clients()
	if err != nil {
		return launcher.Clients{}, nil, fmt.Errorf("kubernetes: %w", err)
	}
	ns = cmp.Or(ns, kubeNS, "default")
	req, err := launcher.FromWire(opts.Args, ns, owner)
	return cs, req, err
}
