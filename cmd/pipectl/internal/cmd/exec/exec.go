// Package exec is `pipectl exec`: the component runtime every step pod of a
// compiled workflow runs.
package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/launcher/gang"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/launcher/rankenv"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// DefaultGracePeriod is the time the program gets between SIGTERM and
// SIGKILL; below Kubernetes' default termination grace period (30s).
const DefaultGracePeriod = 20 * time.Second

// Options are the inputs of `pipectl exec`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory

	Run       string
	Component string
	Step      string
	Params    []string
	Upstream  []string
	// Iteration is the loop iteration to run (-1: the step does not loop).
	Iteration int
	// ArgoStatus, ArgoFailures and ArgoSteps give a finally step of a
	// compiled workflow the run's outcome (see argo.RunFields).
	ArgoStatus, ArgoFailures, ArgoSteps string
	WorkDir                             string
	OutputParams                        string
	GracePeriod                         time.Duration
	Install                             string
	// Gang runs the pod as one node of a distributed step's JobSet (set by
	// pipectl launch): see gang.ExecNode.
	Gang bool
	// Argv replaces the component's command and args (after --).
	Argv []string
	// Image is the step's image: part of its cache fingerprint.
	Image string
	// Cache is what the step does with the step cache (stepcache.Mode).
	Cache string
	// KeepLog uploads the step's log to <run>/<step>/step.log when it ends
	// (not with Gang: the launcher keeps the ranks' combined log).
	KeepLog bool

	// Signals, when set, replaces SIGINT/SIGTERM of the process (tests).
	Signals <-chan os.Signal
	// Executable is the binary --install copies (default os.Executable).
	Executable func() (string, error)
}

// NewCmdExec returns `pipectl exec`; runF replaces the run function in tests.
func NewCmdExec(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "exec --run RUN --component B64 --step B64 [flags] [-- COMMAND...]",
		Short: "Run one step's component: fetch inputs, run, publish outputs (the step pod runtime)",
		Long: `Run one step of a run, as a step pod of a compiled workflow does: fetch the
input artifacts from the store, resolve the placeholders of the component's
command, run it as a child process (SIGTERM and SIGINT are passed to its process
group; its exit code is pipectl exec's), publish the declared outputs with
their metadata to <artifacts>/<run>/<step>/<output>, and with --output-params
write each output parameter's value to DIR/<name> for Argo.

--component and --step are base64 JSON written by 'pipectl compile'; values
given with --param and --upstream are plain text, or "pipectl-b64:" and the
value in base64. After --, a command replaces the component's command and args.

With --cache on, a step whose fingerprint (component, --image, parameter
values, input artifacts' sha256) matches a step that succeeded earlier in the
store is not run: its outputs record names the earlier outputs, marked
cachedFrom that run.

--install PATH copies this binary to PATH and exits (the init container of a
step pod).`,
		Example: `  pipectl exec --run r1 --component "$C" --step "$S" --param epochs=3 --artifacts s3://ml/runs`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := cmdutil.CommandAfterDash(cmd, args)
			if err != nil {
				return err
			}
			opts.Argv = argv
			if opts.Install == "" {
				if err := cmdutil.RequireFlags("", "--run", opts.Run, "--component", opts.Component, "--step", opts.Step); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return execRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Run, "run", "", "the run id")
	fl.StringVar(&opts.Component, "component", "", "the component: base64 JSON (from pipectl compile)")
	fl.StringVar(&opts.Step, "step", "", "the step's wiring: base64 JSON (from pipectl compile)")
	fl.StringArrayVar(&opts.Params, "param", nil, "a pipeline parameter's value: NAME=VALUE (repeatable)")
	fl.StringArrayVar(&opts.Upstream, "upstream", nil, "an upstream output parameter for an input: INPUT=VALUE (repeatable)")
	fl.IntVar(&opts.Iteration, "iteration", -1, "the loop iteration to run, 0-based (a loop step)")
	fl.StringVar(&opts.ArgoStatus, "argo-status", "", "a finally step's {{workflow.status}}")
	fl.StringVar(&opts.ArgoFailures, "argo-failures", "", "a finally step's {{workflow.failures}}")
	fl.StringVar(&opts.ArgoSteps, "argo-steps", "", "a finally step's base64 of the workflow's pipectl.dev/steps annotation")
	fl.StringVar(&opts.WorkDir, "work", "", "work directory for inputs and outputs (default: a temporary directory, removed after)")
	fl.StringVar(&opts.OutputParams, "output-params", "", "write output parameters to DIR/<name>")
	fl.DurationVar(&opts.GracePeriod, "grace-period", DefaultGracePeriod, "time between SIGTERM and SIGKILL for the program")
	fl.StringVar(&opts.Install, "install", "", "copy this binary to PATH and exit")
	fl.StringVar(&opts.Image, "image", "", "the image the step runs in (part of its cache fingerprint)")
	fl.StringVar(&opts.Cache, "cache", string(stepcache.ModeOff), "the step cache: on (reuse an earlier step's outputs when the fingerprint matches, record this one), refresh (run, record), off")
	fl.BoolVar(&opts.KeepLog, "keep-log", true, "upload the step's log (the program's stdout and stderr) to <run>/<step>/step.log when it ends")
	fl.BoolVar(&opts.Gang, "gang", false, "run as one node of a distributed step (set by pipectl launch in rank pods; the rank env comes from the pod)")
	return cmd
}

func execRun(opts *Options) error {
	if opts.Install != "" {
		return install(opts)
	}
	comp, err := plan.DecodeComponent(opts.Component)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	w, err := plan.DecodeWiring(opts.Step)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	params, err := cmdutil.ValueFlags("--param", opts.Params)
	if err != nil {
		return err
	}
	upstream, err := cmdutil.ValueFlags("--upstream", opts.Upstream)
	if err != nil {
		return err
	}
	mode, err := stepcache.ParseMode(opts.Cache)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if opts.Gang {
		mode = stepcache.ModeOff // the launcher looks the step up
	}
	v := plan.Values{Run: opts.Run, Params: params, Upstream: upstream}
	stepName := w.Step
	if opts.Iteration >= 0 {
		v.Iteration = &opts.Iteration
		stepName = pipeline.IterationName(w.Step, opts.Iteration)
	}
	if opts.ArgoSteps != "" {
		if v.RunFields, err = argo.RunFields(opts.ArgoStatus, opts.ArgoFailures, opts.ArgoSteps); err != nil {
			return cmdutil.FlagErrorf("%v", err)
		}
	}
	var stopper cmdutil.Stopper
	ctx, release := stopper.StopOnSignal(context.Background(), opts.Signals, func(sig os.Signal) {
		fmt.Fprintf(opts.IO.ErrOut, "pipectl exec: %v: stopping the program (SIGKILL after %s)\n", sig, opts.GracePeriod)
	})
	defer release()
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	work, cleanup, err := workDir(opts.WorkDir)
	if err != nil {
		return err
	}
	defer cleanup()
	req := components.ExecRequest{
		WorkDir: work, OutputParams: opts.OutputParams,
		Stdout: opts.IO.Out, Stderr: opts.IO.ErrOut,
		GracePeriod: opts.GracePeriod,
	}
	if opts.KeepLog && !opts.Gang {
		kept, err := cmdutil.NewStepLog(work)
		if err != nil {
			return err
		}
		defer kept.Close()
		req.Stdout, req.Stderr = kept.Tee(req.Stdout), kept.Tee(req.Stderr)
		defer func() {
			// Uploaded whatever happened, with a context of its own: the
			// run's may be cancelled.
			if err := kept.Upload(context.Background(), store, artifacts.LogKey(opts.Run, stepName)); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "pipectl exec: keep the step's log: %v\n", err)
			}
		}()
	}
	var sums map[string]string
	if v.Collected, err = stepcache.Collect(ctx, store, opts.Run, w); err == nil {
		req.Invocation, sums, err = invocation(ctx, comp, w, opts.Argv, store, v)
	}
	if err == nil {
		stepcache.AddCollectedSums(sums, v.Collected)
	}
	fp := ""
	if err == nil && mode != stepcache.ModeOff {
		req.Invocation.Component.Image = opts.Image
		if fp, err = stepcache.Fingerprint(ctx, req.Invocation, sums, stepcache.Shape{}); err != nil {
			err = fmt.Errorf("fingerprint: %w", err)
		}
	}
	if err == nil && mode == stepcache.ModeOn {
		if hit, ok := stepcache.Lookup(ctx, store, fp); ok {
			if err := stepcache.Reuse(ctx, store, opts.Run, stepName, opts.OutputParams, hit); err != nil {
				return fmt.Errorf("step %s: %w", stepName, err)
			}
			fmt.Fprintf(req.Stderr, "pipectl exec: step %s cached: reusing the outputs of step %s of run %s\n", stepName, hit.Step, hit.Run)
			return nil
		}
	}
	var records []artifacts.OutputRecord
	if err == nil || opts.Gang {
		records, err = run(ctx, opts, &components.Runtime{Store: store}, req, err)
	}
	if err == nil && fp != "" {
		if err := stepcache.Record(context.WithoutCancel(ctx), store, fp, stepcache.Entry{Run: opts.Run, Step: stepName, Outputs: records}); err != nil {
			fmt.Fprintf(req.Stderr, "pipectl exec: warning: cannot write the cache entry of step %s: %v\n", stepName, err)
		}
	}
	release()
	if err := execError(stepName, stopper.Signal(), err); err != nil {
		return err
	}
	cmdutil.PrintOutputs(req.Stderr, "pipectl exec", records)
	return nil
}

// workDir is dir, made if missing, or a temporary directory removed by cleanup.
func workDir(dir string) (work string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	if work, err = os.MkdirTemp("", "pipectl-exec-"); err != nil {
		return "", nil, err
	}
	return work, func() { os.RemoveAll(work) }, nil
}

// run runs the invocation: as the step's only process, or with --gang as
// one node of a distributed step, its place in the gang read from the rank
// env. With --gang, a bad invocation (invErr) is a *gang.ConfigError.
func run(ctx context.Context, opts *Options, rt *components.Runtime, req components.ExecRequest, invErr error) ([]artifacts.OutputRecord, error) {
	if !opts.Gang {
		return rt.Exec(ctx, req)
	}
	if invErr != nil {
		return nil, &gang.ConfigError{Err: invErr}
	}
	getenv := opts.Factory.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	node, err := rankenv.NodeFromEnv(getenv)
	if err != nil {
		return nil, &gang.ConfigError{Err: err}
	}
	return gang.ExecNode(ctx, rt, req, node)
}

// execError maps how the step ended to the command's error and exit code:
// 128+signal when stopped, jobset.ExitConfig for what no restart heals,
// the program's exit code.
func execError(step string, sig os.Signal, err error) error {
	var ee *components.ExitError
	var ce *gang.ConfigError
	switch {
	case sig != nil:
		return &cmdutil.ExitError{Code: cmdutil.SignalExitCode(sig), Err: fmt.Errorf("step %s stopped by %v", step, sig)}
	case errors.As(err, &ce):
		return &cmdutil.ExitError{Code: jobset.ExitConfig, Err: fmt.Errorf("step %s: %w (no restart can heal this)", step, err)}
	case errors.As(err, &ee):
		return &cmdutil.ExitError{Code: ee.Code, Err: fmt.Errorf("step %s: the program failed: %w", step, err)}
	case err != nil:
		return fmt.Errorf("step %s: %w", step, err)
	}
	return nil
}

// invocation evaluates the step's plan with the run-time values
// (stepcache.Invocation); argv, when set, replaces the component's command
// and args. It returns the input artifacts' sha256 too.
func invocation(ctx context.Context, comp *plan.Component, w *plan.Wiring, argv []string, store artifacts.Store, v plan.Values) (*components.Invocation, map[string]string, error) {
	c, err := comp.Resolve(argv)
	if err != nil {
		return nil, nil, err
	}
	return stepcache.Invocation(ctx, store, c, w, v)
}

// install copies the running binary to opts.Install.
func install(opts *Options) error {
	exe := opts.Executable
	if exe == nil {
		exe = os.Executable
	}
	src, err := exe()
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	dir := filepath.Dir(opts.Install)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".pipectl-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), opts.Install)
	}
	if err != nil {
		return fmt.Errorf("install %s: %w", opts.Install, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "pipectl exec: installed %s\n", opts.Install)
	return nil
}
