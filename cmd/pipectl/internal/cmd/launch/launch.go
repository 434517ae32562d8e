// Package launch is `pipectl launch`: the launcher of a compiled pipeline's
// distributed step. It turns the step's plan.Launch into a JobSet, waits on
// it while streaming every rank's log, cleans up, and checks that rank 0's
// outputs reached the artifact store.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// ExecFlags are the flags `pipectl launch` shares with `pipectl exec`, and
// --distributed.
type ExecFlags struct {
	Run          string
	Component    string
	Step         string
	Params       []string
	Upstream     []string
	WorkDir      string
	OutputParams string
	Distributed  string
	Cache        string
	// Iteration is the loop iteration to run (-1: the step does not loop).
	Iteration int
	// ArgoStatus, ArgoFailures and ArgoSteps give a finally step the run's
	// outcome (see argo.RunFields).
	ArgoStatus, ArgoFailures, ArgoSteps string
}

func addExecFlags(fl *pflag.FlagSet, e *ExecFlags) {
	fl.StringVar(&e.Run, "run", "", "the run id")
	fl.StringVar(&e.Component, "component", "", "the component: base64 JSON (from pipectl compile)")
	fl.StringVar(&e.Step, "step", "", "the step's wiring: base64 JSON (from pipectl compile); with --dry-run -f, the step's name")
	fl.StringArrayVar(&e.Params, "param", nil, "a pipeline parameter's value: NAME=VALUE (repeatable)")
	fl.StringArrayVar(&e.Upstream, "upstream", nil, "an upstream output parameter for an input: INPUT=VALUE (repeatable)")
	fl.StringVar(&e.WorkDir, "work", "", "work directory (unused by the launcher; accepted as exec takes it)")
	fl.StringVar(&e.OutputParams, "output-params", "", "write output parameters to DIR/<name>")
	fl.StringVar(&e.Distributed, "distributed", "", "the launch spec: base64 JSON (from pipectl compile)")
	fl.IntVar(&e.Iteration, "iteration", -1, "the loop iteration to run, 0-based (a loop step): its JobSet, outputs and cache entry are STEP[i]'s")
	fl.StringVar(&e.ArgoStatus, "argo-status", "", "a finally step's {{workflow.status}}")
	fl.StringVar(&e.ArgoFailures, "argo-failures", "", "a finally step's {{workflow.failures}}")
	fl.StringVar(&e.ArgoSteps, "argo-steps", "", "a finally step's base64 of the workflow's pipectl.dev/steps annotation")
	fl.StringVar(&e.Cache, "cache", string(stepcache.ModeOff), "the step cache: on (reuse an earlier step's outputs when the fingerprint matches, creating no JobSet; record this one), refresh (run, record), off")
}

// Options are the inputs of `pipectl launch`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory

	ExecFlags
	// Argv replaces the component's command and args (after --).
	Argv []string

	// Keep leaves the JobSet after it ended.
	Keep bool

	DryRun bool
	File   string
	Values []string
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
				if len(opts.Values) > 0 {
					return cmdutil.FlagErrorf("-p goes with --dry-run -f PIPELINE (a launcher pod gets --param)")
				}
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
	addExecFlags(fl, &opts.ExecFlags)
	cmdutil.AddKubeFlags(cmd, f)
	fl.BoolVar(&opts.Keep, "keep", false, "leave the JobSet in place after it ended (debugging)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the objects it would create and exit")
	fl.StringVarP(&opts.File, "file", "f", "", "with --dry-run: the pipeline file")
	fl.StringArrayVarP(&opts.Values, "param-value", "p", nil, "with --dry-run -f: a pipeline parameter: -p name=value (repeatable)")
	fl.StringVarP(&opts.Output, "output", "o", cmdutil.FormatYAML, "with --dry-run: json or yaml")
	fl.StringVar(&opts.Image, "image", "pipectl:"+f.Version, "with --dry-run -f: the pipectl image (as pipectl compile --image)")
	return cmd
}

// objects are what the launcher creates for a step, from its plan, and
// what it needs after.
type objects struct {
	launch *plan.Launch
	// step is the step's name in the run record: STEP[i] for a loop iteration.
	step     string
	comp     *components.Component
	wiring   *plan.Wiring
	values   plan.Values
	outputs  []components.IO
	jobset   *jobsetv1alpha2.JobSet
	podGroup *unstructured.Unstructured
}

// build makes the objects of a step: its JobSet (and PodGroup) from the
// launch plan, each rank running `pipectl exec --gang` with exec.
func build(ls *plan.Launch, comp *plan.Component, w *plan.Wiring, exec jobset.ExecArgs, namespace string, owner *jobset.Owner) (*objects, error) {
	step := w.Step
	v := plan.Values{Run: exec.Run, Params: exec.Params, Upstream: exec.Upstream, Iteration: exec.Iteration}
	if exec.Iteration != nil {
		step = pipeline.IterationName(w.Step, *exec.Iteration)
	}
	if exec.ArgoSteps != "" {
		var err error
		if v.RunFields, err = argo.RunFields(exec.ArgoStatus, exec.ArgoFailures, exec.ArgoSteps); err != nil {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
	}
	c, err := comp.Resolve(exec.Argv)
	if err != nil {
		return nil, cmdutil.FlagErrorf("--component: %v", err)
	}
	o := jobset.BuildOptions{
		Namespace: namespace,
		Step:      step,
		Exec:      exec,
		Command:   append(append([]string{}, c.Command...), c.Args...),
		Owner:     owner,
	}
	return &objects{
		launch: ls, step: step, outputs: c.Outputs,
		comp: c, wiring: w, values: v,
		jobset:   jobset.BuildJobSet(ls, o),
		podGroup: jobset.BuildPodGroup(ls, o),
	}, nil
}

// decode decodes the exec flags and builds the objects.
func decode(e ExecFlags, argv []string, namespace string, owner *jobset.Owner) (*objects, error) {
	comp, err := plan.DecodeComponent(e.Component)
	if err != nil {
		return nil, cmdutil.FlagErrorf("%v", err)
	}
	w, err := plan.DecodeWiring(e.Step)
	if err != nil {
		return nil, cmdutil.FlagErrorf("%v", err)
	}
	ls, err := plan.DecodeLaunch(e.Distributed)
	if err != nil {
		return nil, cmdutil.FlagErrorf("%v", err)
	}
	params, err := cmdutil.ValueFlags("--param", e.Params)
	if err != nil {
		return nil, err
	}
	upstream, err := cmdutil.ValueFlags("--upstream", e.Upstream)
	if err != nil {
		return nil, err
	}
	exec := jobset.ExecArgs{
		Run: e.Run, Component: e.Component, Step: e.Step,
		Params: params, Upstream: upstream, Argv: argv,
		ArgoStatus: e.ArgoStatus, ArgoFailures: e.ArgoFailures, ArgoSteps: e.ArgoSteps,
	}
	if e.Iteration >= 0 {
		exec.Iteration = &e.Iteration
	}
	return build(ls, comp, w, exec, namespace, owner)
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
	var stopper cmdutil.Stopper
	ctx, release := stopper.StopOnSignal(context.Background(), opts.Signals, nil)
	defer release()
	if d := time.Duration(p.launch.Timeout); d > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("timed out after %s", d))
		defer stop()
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	run, step := opts.Run, p.step
	// The launcher's log (its ranks' lines) is the step's: kept at
	// <run>/<step>/step.log whatever happens, with a context of its own.
	kept, err := cmdutil.NewStepLog("")
	if err != nil {
		return err
	}
	defer kept.Close()
	ios := *opts.IO
	ios.Out, ios.ErrOut = kept.Tee(ios.Out), kept.Tee(ios.ErrOut)
	opts.IO = &ios
	defer func() {
		if err := kept.Upload(context.Background(), store, artifacts.LogKey(run, step)); err != nil {
			fmt.Fprintf(ios.ErrOut, "pipectl launch: keep the step's log: %v\n", err)
		}
	}()
	fp, cached, err := lookup(ctx, opts, store, p)
	if err != nil || cached {
		return err
	}
	// A record left by an earlier attempt must not stand for this one's.
	if err := store.Delete(ctx, artifacts.OutputsKey(run, step)); err != nil {
		return fmt.Errorf("clear the step's outputs record: %w", err)
	}
	l := &launcher.Launcher{
		Clients: cs, Logs: opts.Logs,
		Out: opts.IO.Out, ErrOut: opts.IO.ErrOut,
		StartupTimeout: startupTimeout(p.launch), Keep: opts.Keep,
		RetryInterval: opts.RetryInterval, CleanupTimeout: opts.CleanupTimeout,
	}
	nodes, procs := max(p.launch.Nodes, 1), max(p.launch.ProcsPerNode, 1)
	fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: step %s of run %s: %d node(s) × %d process(es) per node\n", step, run, nodes, procs)
	res, err := l.Run(ctx, p.jobset, p.podGroup, nodes, procs)
	if terminalAt := timings(opts.IO.ErrOut, res, err); !terminalAt.IsZero() {
		defer func() {
			fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: timing terminal-to-exit=%s\n", time.Since(terminalAt))
		}()
	}
	if err := launchError(ctx, step, stopper.Signal(), err); err != nil {
		return err
	}
	records, err := launcher.CollectOutputs(ctx, store, run, step, p.outputs, opts.OutputParams)
	if err != nil {
		return err
	}
	if fp != "" {
		if err := stepcache.Record(context.WithoutCancel(ctx), store, fp, stepcache.Entry{Run: run, Step: step, Outputs: records}); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: warning: cannot write the cache entry of step %s: %v\n", step, err)
		}
	}
	cmdutil.PrintOutputs(opts.IO.ErrOut, "pipectl launch", records)
	return nil
}

// lookup fingerprints the step as `pipectl exec` does, with the rank pods'
// image and the gang shape, unless --cache is off; with --cache on and a
// hit it reuses the earlier outputs (stepcache.Reuse) and reports cached:
// no JobSet is created. fp is "" when the step records no cache entry.
func lookup(ctx context.Context, opts *Options, store artifacts.Store, p *objects) (fp string, cached bool, err error) {
	mode, err := stepcache.ParseMode(opts.Cache)
	if err != nil || mode == stepcache.ModeOff {
		return "", false, err
	}
	v := p.values
	if v.Collected, err = stepcache.Collect(ctx, store, opts.Run, p.wiring); err != nil {
		return "", false, fmt.Errorf("step %s: %w", p.step, err)
	}
	inv, sums, err := stepcache.Invocation(ctx, store, p.comp, p.wiring, v)
	if err != nil {
		return "", false, fmt.Errorf("step %s: %w", p.step, err)
	}
	stepcache.AddCollectedSums(sums, v.Collected)
	inv.Component.Image = p.launch.Image
	fp, err = stepcache.Fingerprint(ctx, inv, sums, stepcache.Shape{Nodes: p.launch.Nodes, Procs: p.launch.ProcsPerNode})
	if err != nil {
		return "", false, fmt.Errorf("step %s: fingerprint: %w", p.step, err)
	}
	if mode != stepcache.ModeOn {
		return fp, false, nil
	}
	hit, ok := stepcache.Lookup(ctx, store, fp)
	if !ok {
		return fp, false, nil
	}
	if err := stepcache.Reuse(ctx, store, opts.Run, p.step, opts.OutputParams, hit); err != nil {
		return "", false, fmt.Errorf("step %s: %w", p.step, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "pipectl launch: step %s cached: reusing the outputs of step %s of run %s (no JobSet created)\n", p.step, hit.Step, hit.Run)
	cmdutil.PrintOutputs(opts.IO.ErrOut, "pipectl launch", hit.Outputs)
	return fp, true, nil
}

// target decodes the flags and connects to the cluster: the namespace is
// -n, else the launcher pod's, else the kubeconfig's; the owner of the
// JobSet is the launcher pod (from the downward API).
func target(opts *Options) (launcher.Clients, *objects, error) {
	clients := opts.Clients
	if clients == nil {
		clients = func() (launcher.Clients, string, error) { return kubeClients(opts.Factory) }
	}
	ns := opts.Factory.Kube.Namespace
	if ns == "" {
		ns = opts.getenv(argo.EnvPodNS)
	}
	var owner *jobset.Owner
	if name, uid := opts.getenv(argo.EnvPodName), opts.getenv(argo.EnvPodUID); name != "" && uid != "" {
		owner = &jobset.Owner{Name: name, UID: uid}
	}
	// Decode everything before touching the cluster: a bad flag fails fast.
	if _, err := decode(opts.ExecFlags, opts.Argv, ns, owner); err != nil {
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
	p, err := decode(opts.ExecFlags, opts.Argv, ns, owner)
	return cs, p, err
}

// timings prints the launch-to-pods-created timing of a run and returns
// when the launcher saw the JobSet terminal (zero if it did not).
func timings(w io.Writer, res *launcher.Result, err error) time.Time {
	var fe *launcher.FailedError
	if res == nil && errors.As(err, &fe) {
		res = &fe.Result
	}
	if res == nil {
		return time.Time{}
	}
	if res.PodsCreated > 0 {
		fmt.Fprintf(w, "pipectl launch: timing launch-to-pods-created=%s\n", res.PodsCreated)
	}
	return res.Terminal
}

// launchError maps how the launcher ended to the command's error and exit
// code: 128+signal when stopped, 124 on the step's timeout, the failed
// rank's exit code.
func launchError(ctx context.Context, step string, sig os.Signal, err error) error {
	var fe *launcher.FailedError
	switch {
	case sig != nil:
		return &cmdutil.ExitError{Code: cmdutil.SignalExitCode(sig), Err: fmt.Errorf("step %s stopped by %v; its JobSet was deleted", step, sig)}
	case errors.Is(err, context.DeadlineExceeded):
		return &cmdutil.ExitError{Code: 124, Err: fmt.Errorf("step %s: %v; its JobSet was deleted", step, context.Cause(ctx))}
	case errors.As(err, &fe):
		code := int(fe.ExitCode)
		if code <= 0 || code > 255 {
			code = cmdutil.ExitError1
		}
		return &cmdutil.ExitError{Code: code, Err: fmt.Errorf("step %s: %w", step, err)}
	case err != nil:
		return fmt.Errorf("step %s: %w", step, err)
	}
	return nil
}

// startupTimeout is the plan's, or without a gang scheduler the default.
func startupTimeout(ls *plan.Launch) time.Duration {
	if ls.StartupTimeout > 0 {
		return time.Duration(ls.StartupTimeout)
	}
	if g := ls.Gang; g != nil && (g.KueueQueue != "" || g.PodGroupScheduler != "") {
		// The gang scheduler admits all ranks or none; queueing may be long.
		return 0
	}
	return launcher.DefaultStartupTimeout
}

// kubeClients adds the JobSet and dynamic clients to the Factory's, which
// are built the kubectl way (--kubeconfig, $KUBECONFIG, ~/.kube/config, or
// the pod's in-cluster config; --context).
func kubeClients(f *cmdutil.Factory) (launcher.Clients, string, error) {
	kc, err := f.Clients()
	if err != nil {
		return launcher.Clients{}, "", err
	}
	js, err := jobsetclient.NewForConfig(kc.Config)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	dyn, err := dynamic.NewForConfig(kc.Config)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	return launcher.Clients{Kube: kc.Kube, JobSets: js, Dynamic: dyn}, kc.Namespace, nil
}
