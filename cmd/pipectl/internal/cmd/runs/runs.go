// Package runs is `pipectl runs ls|get`: browse run records in the artifact store.
package runs

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/runview"
)

// NewCmdRuns returns `pipectl runs`.
func NewCmdRuns(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and inspect runs recorded in the artifact store",
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdDiff(f, nil))
	return cmd
}

// ListOptions are the inputs of `pipectl runs ls`.
type ListOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Output  string
}

// NewCmdList returns `pipectl runs ls`; runF replaces the run function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List runs, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	reader, err := opts.Factory.Runs(ctx, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	runs, err := reader.List(ctx)
	if err != nil {
		return err
	}
	out := make([]runview.Summary, 0, len(runs))
	for _, r := range runs {
		out = append(out, runview.Summarize(r))
	}
	if len(out) == 0 && opts.Output == podutil.FormatTable {
		fmt.Fprintf(opts.IO.ErrOut, "No runs in %s\n", reader.Store().Root())
		return nil
	}
	return cmdutil.Print(opts.IO.Out, opts.Output, out, func(tw *tabwriter.Writer) {
		// A SCHEDULE column when a schedule started any of the runs.
		scheduled := slices.ContainsFunc(out, func(r runview.Summary) bool { return r.Schedule != "" })
		header := "ID\tPIPELINE\tSTATUS\tSTARTED\tDURATION"
		if scheduled {
			header += "\tSCHEDULE"
		}
		fmt.Fprintln(tw, header)
		for _, r := range out {
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.ID, r.Pipeline, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"), duration(&r.Started, r.Finished))
			if scheduled {
				line += "\t" + cmp.Or(scheduleOf(r.Schedule, r.ScheduledTime), "-")
			}
			fmt.Fprintln(tw, line)
		}
	})
}

func duration(start, end *time.Time) string {
	if start == nil || start.IsZero() || end == nil {
		return "-"
	}
	return end.Sub(*start).Round(100 * time.Millisecond).String()
}

// GetOptions are the inputs of `pipectl runs get`.
type GetOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  string
	// Pipeline prints the run's resolved pipeline instead of its record.
	Pipeline bool
}

// NewCmdGet returns `pipectl runs get`; runF replaces the run function in tests.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "get RUN",
		Short: "Show a run: its steps, their status, exit codes and outputs",
		Long: `Show a run. RUN is a run id, or "latest" for the newest run. With
--pipeline, print the pipeline as the run ran it instead: every step's plan
(component, wiring, image, shape) after nesting and KFP import (YAML, or -o json).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.Pipeline, "pipeline", false, "print the run's resolved pipeline (every step's plan) instead of its record")
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	reader, err := opts.Factory.Runs(ctx, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	r, err := reader.Get(ctx, opts.RunID)
	if err != nil {
		return err
	}
	if opts.Pipeline {
		resolved, err := origin.ReadResolved(ctx, reader.Store(), r.ID)
		if err != nil {
			return err
		}
		format := opts.Output
		if format != podutil.FormatJSON {
			format = podutil.FormatYAML // a pipeline has no table
		}
		return cmdutil.Print(opts.IO.Out, format, resolved, nil)
	}
	return cmdutil.Print(opts.IO.Out, opts.Output, r, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "Run:\t%s\n", r.ID)
		fmt.Fprintf(tw, "Pipeline:\t%s\n", r.Pipeline)
		fmt.Fprintf(tw, "Status:\t%s\n", r.Status)
		fmt.Fprintf(tw, "Started:\t%s\n", r.Started.Local().Format(time.RFC3339))
		fmt.Fprintf(tw, "Duration:\t%s\n", duration(&r.Started, r.Finished))
		if s := scheduleOf(r.Schedule, r.ScheduledTime); s != "" {
			fmt.Fprintf(tw, "Schedule:\t%s\n", s)
		}
		if r.Message != "" {
			fmt.Fprintf(tw, "Message:\t%s\n", r.Message)
		}
		if o := r.Origin; o != nil {
			fmt.Fprintf(tw, "Pipectl:\t%s\n", o.Pipectl)
			if o.RerunOf != "" {
				fmt.Fprintf(tw, "Rerun of:\t%s\n", o.RerunOf)
			}
			if o.ImageTags {
				fmt.Fprintf(tw, "Images:\tkept as tags (--image-tags), not pinned to digests\n")
			}
			if g := o.Git; g != nil {
				state := "clean"
				if g.Dirty {
					state = "dirty, diff sha256 " + cmp.Or(g.DiffSHA256, "unknown")
				}
				fmt.Fprintf(tw, "Git:\t%s %s (%s)\n", cmp.Or(g.Branch, "(detached)"), g.Commit, state)
				if g.Remote != "" {
					fmt.Fprintf(tw, "Remote:\t%s\n", g.Remote)
				}
			}
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "STEP\tSTATUS\tEXIT\tCACHED\tDURATION\tCODE\tOUTPUTS")
		for _, s := range r.Steps {
			exit := "-"
			if s.ExitCode != nil {
				exit = fmt.Sprint(*s.ExitCode)
			}
			outs := ""
			for i, o := range s.Outputs {
				if i > 0 {
					outs += ", "
				}
				if o.Value != nil {
					outs += fmt.Sprintf("%s=%s", o.Name, *o.Value)
				} else {
					outs += fmt.Sprintf("%s (%s, %d B)", o.Name, o.Type, o.Size)
				}
			}
			code := "-"
			if c, ok := strings.CutPrefix(s.Code, "sha256:"); ok && len(c) >= 12 {
				code = c[:12]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\t%s\n", s.Name, s.Status, exit, s.Cached, duration(s.Started, s.Finished), code, outs)
		}
		for i := range r.Steps {
			if s := &r.Steps[i]; s.Progress != nil || len(s.GangAttempts) > 0 {
				fmt.Fprintln(tw)
				runview.WriteGang(tw, s)
			}
		}
	})
}

// scheduleOf is a scheduled run's schedule and time, "NAME at TIME" ("" for
// a run started by hand).
func scheduleOf(name, at string) string {
	if name == "" {
		return ""
	}
	return name + " at " + at
}
