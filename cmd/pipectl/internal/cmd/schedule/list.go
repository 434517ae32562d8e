package schedule

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// View is a schedule as `schedule ls|get -o json` show it.
type View struct {
	schedule.Schedule
	// Next is its next time (none while suspended).
	Next string `json:"next,omitempty"`
	// Last is its newest time that ran, LastRun that run.
	Last    string `json:"last,omitempty"`
	LastRun string `json:"lastRun,omitempty"`
	// Runs are its runs, newest time first (`schedule get` only).
	Runs []RunView `json:"runs,omitempty"`
}

// RunView is one run of a schedule.
type RunView struct {
	Time   string `json:"time"`
	Run    string `json:"run"`
	By     string `json:"by"`
	Status string `json:"status"`
}

func view(ctx context.Context, store artifacts.Store, s *schedule.Schedule, now time.Time) (View, []schedulestore.Claim, error) {
	v := View{Schedule: *s}
	if c, err := s.CronOf(); err == nil && !s.Suspended {
		v.Next = schedule.FormatTime(c.Next(now))
	}
	claims, err := schedulestore.Claims(ctx, store, s.Name)
	if err != nil {
		return v, nil, err
	}
	if n := len(claims); n > 0 {
		v.Last, v.LastRun = claims[n-1].Time, claims[n-1].Run
	}
	return v, claims, nil
}

// ListOptions are the inputs of `pipectl schedule ls`.
type ListOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Output  string
	On      string
}

// NewCmdList returns `pipectl schedule ls`; runF replaces the run function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List schedules",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if err := checkOn(opts.On); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	addOnFlag(cmd, f, &opts.On)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	if opts.On == onArgo {
		return argoList(ctx, opts)
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	list, err := schedulestore.List(ctx, store, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	out := make([]View, 0, len(list))
	for _, s := range list {
		v, _, err := view(ctx, store, s, time.Now())
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	if len(out) == 0 && (opts.Output == podutil.FormatTable || opts.Output == "") {
		fmt.Fprintf(opts.IO.ErrOut, "No schedules in %s\n", store.Root())
		return nil
	}
	return printList(opts, out)
}

// printList prints the schedules of `schedule ls`.
func printList(opts *ListOptions, out []View) error {
	return cmdutil.Print(opts.IO.Out, opts.Output, out, func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "NAME\tCRON\tTIMEZONE\tSUSPENDED\tNEXT\tLAST RUN")
		for _, v := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\n", v.Name, v.Cron, orDash(v.Timezone, "UTC"), v.Suspended, orDash(v.Next, "-"), orDash(v.LastRun, "-"))
		}
	})
}

func orDash(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// GetOptions are the inputs of `pipectl schedule get`.
type GetOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Name    string
	Output  string
	On      string
}

// NewCmdGet returns `pipectl schedule get`; runF replaces the run function in tests.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a schedule and its runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if err := checkOn(opts.On); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	addOnFlag(cmd, f, &opts.On)
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	if opts.On == onArgo {
		return argoGet(ctx, opts)
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	s, err := schedulestore.Get(ctx, store, opts.Name)
	if err != nil {
		return err
	}
	v, claims, err := view(ctx, store, s, time.Now())
	if err != nil {
		return err
	}
	for i := len(claims) - 1; i >= 0; i-- {
		c := claims[i]
		status := "-"
		if r, err := recordstore.ReadRun(ctx, store, c.Run); err == nil {
			status = r.Status
		}
		v.Runs = append(v.Runs, RunView{Time: c.Time, Run: c.Run, By: c.By, Status: status})
	}
	return printGet(opts, v)
}

// printGet prints the schedule of `schedule get` and its runs.
func printGet(opts *GetOptions, v View) error {
	return cmdutil.Print(opts.IO.Out, opts.Output, v, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "Schedule:\t%s\n", v.Name)
		fmt.Fprintf(tw, "Pipeline:\t%s\n", v.Pipeline)
		fmt.Fprintf(tw, "Cron:\t%s (%s)\n", v.Cron, orDash(v.Timezone, "UTC"))
		fmt.Fprintf(tw, "Concurrency:\t%s\n", v.Concurrency)
		fmt.Fprintf(tw, "Catch-up:\t%s\n", v.CatchUp)
		fmt.Fprintf(tw, "Suspended:\t%v\n", v.Suspended)
		fmt.Fprintf(tw, "Next:\t%s\n", orDash(v.Next, "-"))
		for _, k := range slices.Sorted(maps.Keys(v.Params)) {
			fmt.Fprintf(tw, "Param:\t%s=%s\n", k, v.Params[k])
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "TIME\tRUN\tBY\tSTATUS")
		for _, r := range v.Runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Time, r.Run, r.By, r.Status)
		}
	})
}

// newCmdSuspend returns `pipectl schedule suspend` (or resume).
func newCmdSuspend(f *cmdutil.Factory, suspend bool) *cobra.Command {
	use, short := "suspend NAME", "Stop a schedule from firing (its runs go on)"
	if !suspend {
		use, short = "resume NAME", "Let a suspended schedule fire again, from now on (backfill runs the times it missed)"
	}
	var on string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch err := checkOn(on); {
			case err != nil:
				return err
			case on == onArgo:
				return argoSuspend(cmd.Context(), f, args[0], suspend)
			}
			return suspendRun(cmd.Context(), f, args[0], suspend)
		},
	}
	addOnFlag(cmd, f, &on)
	return cmd
}

func suspendRun(ctx context.Context, f *cmdutil.Factory, name string, suspend bool) error {
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	s, err := schedulestore.Get(ctx, store, name)
	if err != nil {
		return err
	}
	word := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if s.Suspended == suspend {
		fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s is %s already\n", name, map[bool]string{true: "suspended", false: "active"}[suspend])
		return nil
	}
	now := time.Now()
	if !suspend {
		// The times it was suspended for are not missed: they were not wanted.
		if err := schedulestore.SetCursor(ctx, store, name, now); err != nil {
			return err
		}
	}
	s.Suspended, s.Updated = suspend, now
	if err := schedulestore.Put(ctx, store, s); err != nil {
		return err
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s %s\n", name, word)
	return nil
}

// NewCmdDelete returns `pipectl schedule delete`; runF replaces the run function in tests.
func NewCmdDelete(f *cmdutil.Factory, runF func(string) error) *cobra.Command {
	var on string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a schedule (its runs stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOn(on); err != nil {
				return err
			}
			if runF != nil {
				return runF(args[0])
			}
			if on == onArgo {
				return argoDelete(cmd.Context(), f, args[0])
			}
			store, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			if err := schedulestore.Delete(cmd.Context(), store, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s deleted\n", args[0])
			return nil
		},
	}
	addOnFlag(cmd, f, &on)
	return cmd
}
