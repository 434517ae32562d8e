// Package launch is `pipectl launch`: the launcher of a compiled pipeline's
// distributed step. It turns the step's plan.Launch into a JobSet, waits on
// it while streaming every rank's log, cleans up, and checks that rank 0's
// outputs reached the artifact store.
package launch

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline/step"
	"pipectl.dev/pipectl/pipeline/stepcache"
	"pipectl.dev/pipectl/pipeline/wire"
)

// Options are the inputs of `pipectl launch`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory

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

	// Clients, when set, replaces the clients built from the kubeconfig (tests).
	Clients func() (launcher.Clients, string, error)
	// Logs, when set, replaces the pods/log API as the rank logs' source (tests).
	Logs launcher.LogSource
	// Signals, when set, replaces SIGINT/SIGTERM of the process (tests).
	Signals <-chan os.Signal
	// RetryInterval and CleanupTimeout tune the launcher (tests).
	RetryInterval, CleanupTimeout time.Duration
}

// NewCmdLaunch returns `pipectl launch`; runF replaces the run function in tests.
func NewCmdLaunch(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
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
launcher would create, with no cluster access.

Timings for benchmarks are logged on stderr as
  pipectl launch: timing launch-to-pods-created=DURATION
  pipectl launch: timing terminal-to-exit=DURATION`,
		Example: `  pipectl launch --dry-run -f examples/attrition/pipeline.yaml --step train -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := cmdutil.CommandAfterDash(cmd, args)
			if err != nil {
				return err
			}
			opts.Argv = argv
			if err := cmdutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if opts.DryRun && opts.File != "" {
				if opts.Step == "" {
					return cmdutil.FlagErrorf("--dry-run -f needs --step STEP (the step's name)")
				}
			} else {
				if err := cmdutil.RequireFlags("or --dry-run -f PIPELINE --step STEP", "--run", opts.Run, "--component", opts.Component, "--step", opts.Step, "--distributed", opts.Distributed); err != nil {
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
	cmdutil.AddKubeFlags(cmd, f)
	fl.BoolVar(&opts.Keep, "keep", false, "leave the JobSet in place after it ended (debugging)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the objects it would create and exit")
	fl.StringVarP(&opts.File, "file", "f", "", "with --dry-run: the pipeline file")
	fl.StringVarP(&opts.Output, "output", "o", cmdutil.FormatYAML, "with --dry-run: json or yaml")
	fl.StringVar(&opts.Image, "image", "pipectl:"+f.Version, "with --dry-run -f: the pipectl image (as pipectl compile --image)")
	return cmd
}

// objects are what the launcher creates for a step, from its request,
// and what it needs after.
type objects struct {
	req      *wire.Request
	outputs  []components.IO
	jobset   *jobsetv1alpha2.JobSet
	podGroup *unstructured.Unstructured
}

// decode decodes the launcher's arguments and builds the objects of its
// step: its JobSet (and PodGroup) from the launch plan, each rank running
// `pipectl exec --gang` with the launcher's arguments, values decoded and
// encoded again for the rank pods.
func decode(a wire.Args, namespace string, owner *jobset.Owner) (*objects, error) {
	if a.Distributed == "" {
		return nil, cmdutil.FlagErrorf("--distributed: the launch spec is missing")
	}
	r, err := a.Decode()
	if err != nil {
		return nil, cmdutil.FlagErrorf("%v", err)
	}
	c, err := r.Component.Resolve(r.Argv)
	if err != nil {
		return nil, cmdutil.FlagErrorf("--component: %v", err)
	}
	rank := wire.Args{
		Run: a.Run, Step: a.Step, Component: a.Component, Iteration: a.Iteration,
		Params: wire.Values(r.Values.Params), Upstream: wire.Values(r.Values.Upstream),
		ArgoStatus: a.ArgoStatus, ArgoFailures: a.ArgoFailures, ArgoSteps: a.ArgoSteps, Argv: a.Argv,
	}
	o := jobset.BuildOptions{
		Namespace: namespace,
		Step:      r.Name,
		Exec:      rank,
		Command:   append(append([]string{}, c.Command...), c.Args...),
		Owner:     owner,
	}
	return &objects{req: r, outputs: c.Outputs, jobset: jobset.BuildJobSet(r.Launch, o), podGroup: jobset.BuildPodGroup(r.Launch, o)}, nil
}

func (o *Options) getenv(name string) string {
	if o.Factory.Getenv != nil {
		return o.Factory.Getenv(name)
	}
	return os.Getenv(name)
}

func launchRun(opts *Options) error {
	if opts.DryRun {
		return dryRun(opts)
	}
	cs, p, err := target(opts)
	if err != nil {
		return err
	}
	ls, run, name := p.req.Launch, p.req.Values.Run, p.req.Name
	var stopper cmdutil.Stopper
	ctx, release := stopper.StopOnSignal(context.Background(), opts.Signals, nil)
	defer release()
	if d := time.Duration(ls.Timeout); d > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("timed out after %s", d))
		defer stop()
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	// The launcher's log (its ranks' lines) is the step's: kept at
	// <run>/<step>/step.log whatever happens.
	log, err := step.NewLog("")
	if err != nil {
		return err
	}
	defer log.Close()
	ios := *opts.IO
	ios.Out, ios.ErrOut = log.Tee(ios.Out), log.Tee(ios.ErrOut)
	opts.IO = &ios
	job := &step.Job{
		Run: run, Name: name, Cache: p.req.Cache, OutputParams: opts.OutputParams,
		Shape: stepcache.Shape{Nodes: ls.Nodes, Procs: ls.ProcsPerNode},
		Log:   log, KeepCachedLog: true,
		Cached: func(hit stepcache.Entry) {
			fmt.Fprintf(ios.ErrOut, "pipectl launch: step %s cached: reusing the outputs of step %s of run %s (no JobSet created)\n", name, hit.Step, hit.Run)
			cmdutil.PrintOutputs(ios.ErrOut, "pipectl launch", hit.Outputs)
		},
		Warnf: func(format string, args ...any) {
			fmt.Fprintf(ios.ErrOut, "pipectl launch: warning: "+format+"\n", args...)
		},
	}
	if job.Cache != stepcache.ModeOff {
		// Fingerprinted as `pipectl exec` does, with the rank pods' image.
		p.req.Image = ls.Image
		if job.Invocation, job.InputSums, err = step.Invocation(ctx, store, p.req); err != nil {
			return fmt.Errorf("step %s: %w", name, err)
		}
	}
	js := &launcher.Step{
		Launcher: &launcher.Launcher{
			Clients: cs, Logs: opts.Logs, Out: ios.Out, ErrOut: ios.ErrOut, Keep: opts.Keep,
			RetryInterval: opts.RetryInterval, CleanupTimeout: opts.CleanupTimeout,
		},
		Store: store, RunID: run, Name: name, Launch: ls, JobSet: p.jobset, PodGroup: p.podGroup,
		Outputs: p.outputs, OutputParams: opts.OutputParams, Log: ios.ErrOut,
		Done: func(records []artifacts.OutputRecord) { cmdutil.PrintOutputs(ios.ErrOut, "pipectl launch", records) },
	}
	job.Strategy = js
	res, err := (&step.Executor{Store: store}).Execute(ctx, job)
	if !js.TerminalAt.IsZero() {
		defer func() {
			fmt.Fprintf(ios.ErrOut, "pipectl launch: timing terminal-to-exit=%s\n", time.Since(js.TerminalAt))
		}()
	}
	if res.Cached && err != nil {
		return fmt.Errorf("step %s: %w", name, err)
	}
	return cmdutil.StepError(ctx, name, stopper.Signal(), err, "; its JobSet was deleted")
}

// target decodes the flags and connects to the cluster: the namespace is
// -n, else the launcher pod's, else the kubeconfig's; the owner of the
// JobSet is the launcher pod (from the downward API).
func target(opts *Options) (launcher.Clients, *objects, error) {
	clients := opts.Clients
	if clients == nil {
		clients = func() (launcher.Clients, string, error) { return opts.Factory.LauncherClients() }
	}
	ns := opts.Factory.Kube.Namespace
	if ns == "" {
		ns = opts.getenv(wire.EnvPodNS)
	}
	var owner *jobset.Owner
	if name, uid := opts.getenv(wire.EnvPodName), opts.getenv(wire.EnvPodUID); name != "" && uid != "" {
		owner = &jobset.Owner{Name: name, UID: uid}
	}
	// Decode everything before touching the cluster: a bad flag fails fast.
	if _, err := decode(opts.Args, ns, owner); err != nil {
		return launcher.Clients{}, nil, err
	}
	cs, kubeNS, err := clients()
	if err != nil {
		return launcher.Clients{}, nil, fmt.Errorf("kubernetes: %w", err)
	}
	if ns == "" {
		ns = kubeNS
	}
	if ns == "" {
		ns = "default"
	}
	p, err := decode(opts.Args, ns, owner)
	return cs, p, err
}
