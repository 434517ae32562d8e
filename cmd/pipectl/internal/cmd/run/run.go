// Package run is `pipectl run FILE`: run a pipeline on this machine.
package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/local"
)

// Options are the inputs of `pipectl run`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory

	File        string
	Params      []string
	On          string
	Parallelism int
	NoCache     bool
	KeepWork    bool
	Output      string
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

Exit status: 0 when the run succeeded, 1 when a step failed, 130 when cancelled.`,
		Example: `  pipectl run examples/attrition/pipeline.yaml
  pipectl run pipeline.yaml -p epochs=5 --artifacts s3://ml-artifacts/runs`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := cmdutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if opts.On != "local" {
				return cmdutil.FlagErrorf("--on %s: only local runs are supported by this build (want --on local)", opts.On)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Params, "param", "p", nil, "set a pipeline parameter: -p name=value (repeatable)")
	cmd.Flags().StringVar(&opts.On, "on", "local", "where to run: local")
	cmd.Flags().IntVar(&opts.Parallelism, "parallelism", 0, "steps running at once (default: the number of CPUs)")
	cmd.Flags().BoolVar(&opts.NoCache, "no-cache", false, "run every step, reusing no earlier outputs")
	cmd.Flags().BoolVar(&opts.KeepWork, "keep-work", false, "keep the steps' work directories")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "print the run record when done: json or yaml")
	return cmd
}

func runRun(opts *Options) error {
	p, err := pipeline.Load(opts.File)
	if err != nil {
		return err
	}
	overrides, err := pipeline.ParseOverrides(opts.Params)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	params, err := p.ResolveParams(overrides)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = opts.Factory.Progress(ctx)
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	r := &local.Runner{
		Store:       store,
		Parallelism: opts.Parallelism,
		NoCache:     opts.NoCache,
		KeepWork:    opts.KeepWork,
		Logs:        opts.IO.Out,
		Status:      opts.IO.ErrOut,
	}
	if opts.Output != "" && opts.Output != cmdutil.FormatTable {
		// Structured output owns stdout; logs go with the status.
		r.Logs = opts.IO.ErrOut
	}
	rec, err := r.Run(ctx, p, params)
	if rec != nil && opts.Output != "" && opts.Output != cmdutil.FormatTable {
		if perr := cmdutil.Print(opts.IO.Out, opts.Output, rec, nil); perr != nil {
			return perr
		}
	}
	var rerr *local.RunError
	if errors.As(err, &rerr) {
		code := cmdutil.ExitError1
		if rerr.Run.Status == artifacts.StatusCancelled {
			code = cmdutil.ExitCancelled
		}
		return &cmdutil.ExitError{Code: code, Err: err, Silent: true}
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", opts.File, err)
	}
	return nil
}
