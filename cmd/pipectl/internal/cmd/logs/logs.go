// Package logs is `pipectl logs RUN [STEP]`: print the logs kept with a run.
package logs

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runstore"
)

// Options are the inputs of `pipectl logs`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Step    string
	// Follow prints the logs as they grow, until the run ends.
	Follow bool
}

// NewCmdLogs returns `pipectl logs`; runF replaces the run function in tests.
func NewCmdLogs(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "logs RUN [STEP]",
		Short: "Print the logs of a run's steps (every rank's lines, prefixed)",
		Long: `Print the logs kept with a run, step by step, or of one step. RUN may be "latest".

With -f, follow a running run: print its steps' lines as they come (a local
run's logs reach the store every few seconds; a cluster step's when it ends)
until the run ends, then say how it ended. "latest" is the newest run when
pipectl logs starts.`,
		Example: `  pipectl logs latest train
  pipectl run pipeline.yaml & pipectl logs -f latest`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if len(args) == 2 {
				opts.Step = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Follow {
				return followRun(cmd.Context(), opts)
			}
			return logsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "follow a running run: print the lines as they come, until it ends")
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func logsRun(ctx context.Context, opts *Options) error {
	runs, r, err := openRun(ctx, opts)
	if err != nil {
		return err
	}
	store := runs.Store()
	for _, s := range r.Steps {
		if opts.Step != "" && s.Name != opts.Step {
			continue
		}
		err := artifacts.Copy(ctx, store, record.LogKey(r.ID, s.Name), opts.IO.Out, "")
		if errors.Is(err, artifacts.ErrNotFound) {
			reason := s.Status
			if s.Message != "" {
				reason += ": " + s.Message
			}
			if opts.Step != "" {
				return fmt.Errorf("step %s of run %s has no log (%s)", s.Name, r.ID, reason)
			}
			fmt.Fprintf(opts.IO.ErrOut, "[%s] no log (%s)\n", s.Name, reason)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// openRun reads the record of run opts.RunID, which must have step
// opts.Step when one is given.
func openRun(ctx context.Context, opts *Options) (*runstore.Reader, *record.Run, error) {
	runs, err := opts.Factory.Runs(ctx, opts.IO.ErrOut)
	if err != nil {
		return nil, nil, err
	}
	r, err := runs.Get(ctx, opts.RunID)
	if err != nil {
		return nil, nil, err
	}
	if err := hasStep(r, opts.Step); err != nil {
		return nil, nil, err
	}
	return runs, r, nil
}

// hasStep fails when step is not "" and not a step of r.
func hasStep(r *record.Run, step string) error {
	if step == "" || r.Step(step) != nil {
		return nil
	}
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	return fmt.Errorf("run %s has no step %q (steps: %v)", r.ID, step, names)
}
