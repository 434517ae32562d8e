package schedule

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/scheduler"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// BackfillOptions are the inputs of `pipectl schedule backfill`.
type BackfillOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory

	Name, From, To string
	Parallelism    int
	Yes            bool
	Output         string
	// On is where the schedule is kept (local or argo).
	On string
	// Poll is how often a backfill on Argo looks at its workflows.
	Poll time.Duration
}

// NewCmdBackfill returns `pipectl schedule backfill`; runF replaces the run function in tests.
func NewCmdBackfill(f *cmdutil.Factory, runF func(*BackfillOptions) error) *cobra.Command {
	opts := &BackfillOptions{IO: f.IOStreams, Factory: f, Poll: 2 * time.Second}
	cmd := &cobra.Command{
		Use:   "backfill NAME --from T1 --to T2",
		Short: "Run every time of a schedule in [T1, T2) that has no run yet, oldest first",
		Long: `Run every time of the schedule in [--from, --to) that has no run yet, oldest
first, each with its {{run.scheduledTime}}. A time that ran (by serve or an
earlier backfill) is not run again: a second backfill of a range adds nothing.
Steps whose inputs did not change are reused from earlier runs (the step cache).
T1 and T2 are RFC 3339 times, or 2006-01-02[T15:04[:05]] in the schedule's
time zone. A range of more than 10000 times needs --yes.

With --on argo, each time is a workflow of the schedule's CronWorkflow,
made as Argo's cron controller makes it (named NAME-UNIXTIME, so a time has
one workflow whoever submits it), at most --parallelism at once; a time
with a workflow, or a run in the store, is not run again.

Exit status: 0 when every run succeeded, 1 otherwise, 130 when cancelled.`,
		Example: `  pipectl schedule backfill nightly --from 2026-01-01 --to 2026-02-01 --parallelism 4`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if err := checkOn(opts.On); err != nil {
				return err
			}
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			switch {
			case opts.From == "" || opts.To == "":
				return podutil.FlagErrorf("want --from T1 and --to T2")
			case opts.Parallelism < 1:
				return podutil.FlagErrorf("--parallelism %d: want at least 1", opts.Parallelism)
			}
			if runF != nil {
				return runF(opts)
			}
			return backfillRun(opts)
		},
	}
	addOnFlag(cmd, f, &opts.On)
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the range's start (included)")
	fl.StringVar(&opts.To, "to", "", "the range's end (excluded)")
	fl.IntVar(&opts.Parallelism, "parallelism", 1, "runs at once")
	fl.BoolVar(&opts.Yes, "yes", false, "run a range of more than 10000 times")
	fl.StringVarP(&opts.Output, "output", "o", "", "print the summary: json or yaml")
	return cmd
}

func backfillRun(opts *BackfillOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	b := &scheduler.Backfill{Store: store, Run: localRuns(opts.Factory), Status: opts.IO.ErrOut, Parallelism: opts.Parallelism, Yes: opts.Yes}
	if opts.On == onArgo {
		err = argoBackfill(ctx, opts, b)
	} else {
		b.Schedule, err = schedulestore.Get(ctx, store, opts.Name)
	}
	if err != nil {
		return err
	}
	from, to, err := backfillRange(opts, b.Schedule)
	if err != nil {
		return err
	}
	sum, err := b.Fill(ctx, opts.Name, from, to)
	if sum == nil {
		return err
	}
	if opts.Output != "" && opts.Output != podutil.FormatTable {
		if perr := cmdutil.Print(opts.IO.Out, opts.Output, sum, func(*tabwriter.Writer) {}); perr != nil {
			return perr
		}
	}
	switch {
	case ctx.Err() != nil:
		return &podutil.ExitError{Code: podutil.ExitCancelled, Err: errors.New("backfill cancelled"), Silent: true}
	case err != nil:
		return &podutil.ExitError{Code: podutil.ExitError1, Err: err, Silent: true}
	}
	return nil
}

// backfillRange reads --from and --to in schedule s's zone.
func backfillRange(opts *BackfillOptions, s *schedule.Schedule) (from, to time.Time, err error) {
	c, err := s.CronOf()
	if err != nil {
		return from, to, err
	}
	if from, err = ParseTime(opts.From, c.Location()); err != nil {
		return from, to, podutil.FlagErrorf("--from: %v", err)
	}
	if to, err = ParseTime(opts.To, c.Location()); err != nil {
		return from, to, podutil.FlagErrorf("--to: %v", err)
	}
	if !from.Before(to) {
		return from, to, podutil.FlagErrorf("--from %s is not before --to %s", opts.From, opts.To)
	}
	return from, to, nil
}

// localRuns runs scheduled times on this machine: run logs to stdout,
// progress to stderr, into the factory's store.
func localRuns(f *cmdutil.Factory) scheduler.RunFunc {
	return scheduler.Local(func() *local.Runner {
		store, _ := f.Store(context.Background()) // opened already
		return &local.Runner{Store: store, Logs: f.IOStreams.Out, Status: f.IOStreams.ErrOut}
	})
}

// timeForms are the forms of --from and --to besides RFC 3339, read in the
// schedule's zone.
var timeForms = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// ParseTime reads an RFC 3339 time, or one of timeForms in loc.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.In(loc), nil
	}
	for _, f := range timeForms {
		if t, err := time.ParseInLocation(f, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-01-02T03:04:05Z) or 2026-01-02[T03:04[:05]] in the schedule's zone", s)
}
