// Package run is `pipectl run FILE`: run a pipeline on this machine.
package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/local"
)

// Options are the inputs of `pipectl run`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory

	File   string
	Params []string
	// Rerun runs the pipeline run Rerun ran; From runs that step and
	// what is downstream of it again.
	Rerun, From string
	// Yes runs a rerun's stored code without asking (TrustRerun).
	Yes bool
	// NoResume starts a rerun's distributed steps from no checkpoint
	// (by default they resume from the re-run run's last one).
	NoResume    bool
	On          string
	Parallelism int
	NoCache     bool
	KeepWork    bool
	Output      string

	// Cluster runs (--on argo).
	Argo ArgoOptions
}

// NewCmdRun returns `pipectl run`; runF replaces the run function in tests.
func NewCmdRun(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a pipeline",
		Long: `Run a pipeline on this machine: every step is a subprocess, a distributed step
N×P rank processes wired like torchrun; independent steps run in parallel.
Step logs stream to stdout, prefixed by step and rank; progress and the final
summary go to stderr. Ctrl-C stops every step and records the run as Cancelled.

A step's program is looked up in the step's PATH: pipectl's own, after the
folders of the project's local settings, if any. Those are a file
pipectl.local.yaml in the pipeline file's folder or the nearest folder above it
(the working directory's with --rerun), for the machine it is on (keep it out
of git):

  path: [/home/me/.venvs/torch/bin]   # folders put first on every step's PATH

so that a step's python3 is the one with the step's packages whatever python3
your shell finds first. 'make demo' writes one when the python3 on PATH cannot
import torch; 'pipectl run' says when it uses one. Cluster runs ignore it: the
image decides there.

With --on argo, the pipeline is compiled (as 'pipectl compile' does), submitted
to the cluster of the kubeconfig, and followed: the steps' progress (a live table
on a terminal), every step pod's log prefixed [step], and a summary with the
outputs. The run record goes to the --artifacts store (an s3:// root the pods
share). Ctrl-C asks whether to stop the workflow (--stop-on-exit stops it
without asking; without a terminal it keeps running); 'pipectl run --on argo
--attach RUN' follows it again.

Exit status: 0 when the run succeeded, 1 when a step failed, 130 when cancelled.`,
		Example: `  pipectl run examples/attrition/pipeline.yaml
  pipectl run examples/attrition/pipeline.yaml --on argo -n ml --artifacts s3://ml-artifacts/runs \
    --s3-secret pipectl-s3 --s3-endpoint http://minio.minio:9000
  pipectl run pipeline.yaml -p epochs=5 --artifacts s3://ml-artifacts/runs`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if opts.Parallelism < 0 {
				return podutil.FlagErrorf("--parallelism %d: expected a number of steps at once, at least 1 (or 0: the number of CPUs)", opts.Parallelism)
			}
			given := slices.DeleteFunc([]string{opts.File, opts.Argo.Attach, opts.Rerun}, func(s string) bool { return s == "" })
			switch {
			case opts.On != "local" && opts.On != "argo":
				return podutil.FlagErrorf("--on %s: want local or argo", opts.On)
			case opts.On == "local" && opts.Argo.Attach != "":
				return podutil.FlagErrorf("--attach needs --on argo")
			case len(given) != 1 || opts.Argo.Attach != "" && opts.From != "":
				return podutil.FlagErrorf("want one of: a pipeline FILE (accepts 1 arg), --rerun RUN, or with --on argo --attach RUN (without --from)")
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.On == "argo" {
				return argoRun(opts)
			}
			return runRun(opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Params, "param", "p", nil, "set a pipeline parameter: -p name=value (repeatable)")
	cmd.Flags().StringVar(&opts.On, "on", "local", "where to run: local, or argo (a cluster, through Argo Workflows)")
	cmd.Flags().IntVar(&opts.Parallelism, "parallelism", 0, "steps running at once (default: the number of CPUs)")
	cmd.Flags().BoolVar(&opts.NoCache, "no-cache", false, "run every step, reusing no earlier outputs")
	cmd.Flags().BoolVar(&opts.KeepWork, "keep-work", false, "keep the steps' work directories")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "print the run record when done: json or yaml")
	cmd.Flags().StringVar(&opts.Rerun, "rerun", "", "run again the pipeline that run RUN ran (as recorded, not today's file), with its params (-p overrides them): what succeeded is reused")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "with --rerun: run the code stored with the run without asking (on a terminal, its origin is shown and you are asked; elsewhere --yes is needed)")
	cmd.Flags().BoolVar(&opts.NoResume, "no-resume", false, "with --rerun: start distributed steps from scratch, not from the re-run run's last checkpoint (see: pipectl help checkpoints)")
	cmd.Flags().StringVar(&opts.From, "from", "", "run step STEP and everything downstream of it again, reusing nothing there")
	addArgoFlags(cmd, f, opts)
	return cmd
}

func runRun(opts *Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := cmdutil.LoadRun(ctx, opts.Factory, opts.File, opts.Params, opts.Rerun, opts.From)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C while a rerun's pipeline is fetched.
		return &podutil.ExitError{Code: podutil.ExitCancelled, Err: err}
	}
	if err != nil {
		return err
	}
	defer l.Cleanup()
	if err := cmdutil.TrustRerun(opts.IO, l.Rerun, opts.Yes); err != nil {
		return err
	}
	ctx = opts.Factory.Progress(ctx)
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	r := &local.Runner{
		Store: store, Origin: l.Origin(ctx, opts.Factory), Source: l.Source,
		Parallelism: opts.Parallelism, NoCache: opts.NoCache, KeepWork: opts.KeepWork,
		Logs: opts.IO.LogsOut(opts.Output), Status: opts.IO.ErrOut,
		Import: imports.Options{ImportOptions: imports.ImportOptions{S3: opts.Factory.StoreOptions.S3}},
	}
	r.ResumeFrom = resumeFrom(opts, l)
	if r.Path, err = localPath(opts); err != nil {
		return err
	}
	rec, err := r.Run(ctx, l.Pipeline, l.Values)
	if rerr := (*local.RunError)(nil); err != nil && !errors.As(err, &rerr) {
		return fmt.Errorf("run %s: %w", opts.File, err)
	}
	return cmdutil.EndRun(opts.IO.Out, opts.Output, rec)
}

// resumeFrom is the run whose checkpoints a rerun's distributed steps
// resume from, on either backend: the run it re-runs, unless --no-resume;
// --from reruns its steps from scratch, checkpoints included.
func resumeFrom(opts *Options, l *cmdutil.Loaded) string {
	if l.Rerun == nil || opts.NoResume || opts.From != "" {
		return ""
	}
	return l.Rerun.ID
}

// localPath is the folders the project's local settings (pipectl.local.yaml
// in the pipeline file's folder or one above it; the working directory's for
// --rerun) put before the steps' PATH, said on stderr when there are any.
func localPath(opts *Options) ([]string, error) {
	dir := "."
	if opts.File != "" && opts.File != "-" {
		dir = filepath.Dir(opts.File)
	}
	settings, err := cmdutil.FindLocalSettings(dir)
	if err != nil || settings == nil || len(settings.Path) == 0 {
		return nil, err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Steps' PATH begins with %s (%s)\n", strings.Join(settings.Path, string(os.PathListSeparator)), settings.File)
	for _, d := range settings.Path {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			fmt.Fprintf(opts.IO.ErrOut, "Warning: %s: %s is not a folder here; steps' programs are looked up in the rest of PATH\n", settings.File, d)
		}
	}
	return settings.Path, nil
}
