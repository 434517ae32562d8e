// Package exec is `pipectl exec`: the component runtime every step pod of a
// compiled workflow runs.
package exec

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/runview"
	"pipectl.dev/pipectl/pipeline/step"
)

// Options are the inputs of `pipectl exec`.
type Options struct {
	IO      *podutil.IOStreams
	Factory podutil.Env

	// Args are the wire: what the compiler (or the launcher, in rank pods)
	// wrote, Argv what follows --.
	wire.Args
	GracePeriod time.Duration
	Install     string
	// KeepLog uploads the step's log to <run>/<step>/step.log when it ends
	// (not with Gang: the launcher keeps the ranks' combined log).
	KeepLog bool

	// Signals, when set, replaces SIGINT/SIGTERM of the process (tests).
	Signals <-chan os.Signal
	// Executable is the binary --install copies (default os.Executable).
	Executable func() (string, error)
}

// NewCmdExec returns `pipectl exec`; runF replaces the run function in tests.
func NewCmdExec(f podutil.Env, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.Streams(), Factory: f}
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
			argv, err := podutil.CommandAfterDash(cmd, args)
			if err != nil {
				return err
			}
			opts.Argv = argv
			if opts.Install == "" {
				if err := podutil.RequireFlags("", "--run", opts.Run, "--component", opts.Component, "--step", opts.Step); err != nil {
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
	opts.AddFlags(fl, wire.Exec)
	fl.DurationVar(&opts.GracePeriod, "grace-period", step.PodGracePeriod, "time between SIGTERM and SIGKILL for the program")
	fl.StringVar(&opts.Install, "install", "", "copy this binary to PATH and exit")
	fl.BoolVar(&opts.KeepLog, "keep-log", true, "upload the step's log (the program's stdout and stderr) to <run>/<step>/step.log when it ends")
	return cmd
}

func execRun(opts *Options) error {
	started := time.Now()
	if opts.Install != "" {
		return install(opts)
	}
	r, err := step.DecodeArgs(opts.Args)
	if err != nil {
		return podutil.FlagErrorf("%v", err)
	}
	var stopper podutil.Stopper
	ctx, release := stopper.StopOnSignal(context.Background(), opts.Signals, func(sig os.Signal) {
		fmt.Fprintf(opts.IO.ErrOut, "pipectl exec: %v: stopping the program (SIGKILL after %s)\n", sig, opts.GracePeriod)
	})
	defer release()
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	pod := &step.Pod{
		Request: r, Store: store, WorkDir: opts.WorkDir, Gang: opts.Gang, KeepLog: opts.KeepLog, OutputParams: opts.OutputParams,
		Stdout: opts.IO.Out, Stderr: opts.IO.ErrOut, GracePeriod: opts.GracePeriod, Getenv: opts.Factory.Env,
		Started: started,
	}
	res, err := pod.Execute(ctx)
	release()
	if err := podutil.StepError(ctx, r.Name, res.Cached, stopper.Signal(), err, ""); err != nil || res.Cached || res.Skipped {
		return err
	}
	runview.WriteOutputs(opts.IO.ErrOut, "pipectl exec", res.Outputs)
	return nil
}

// install copies the running binary to opts.Install.
func install(opts *Options) error {
	exe := opts.Executable
	if exe == nil {
		exe = os.Executable
	}
	src, err := exe()
	if err == nil {
		err = wire.Install(src, opts.Install)
	}
	if err != nil {
		return fmt.Errorf("install %s: %w", opts.Install, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "pipectl exec: installed %s\n", opts.Install)
	return nil
}
