// Package schedule is `pipectl schedule`: keep pipelines on a cron, fire
// them (serve) and backfill them, on this machine.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// NewCmdSchedule returns `pipectl schedule`.
func NewCmdSchedule(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Keep pipelines on a cron: create, list, suspend, backfill and serve schedules",
		Long: `A schedule runs a pipeline file on a cron, in a time zone, with params; each run
reads its scheduled time as {{run.scheduledTime}}. Schedules are kept in the
artifact store (--artifacts); 'pipectl schedule serve' runs what is due, and
'pipectl schedule backfill' runs the times of a range that have no run yet.
See 'pipectl help schedules'.`,
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdApply(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil),
		newCmdSuspend(f, true), newCmdSuspend(f, false), NewCmdDelete(f, nil), NewCmdBackfill(f, nil), NewCmdServe(f, nil), newCmdRecordRun(f))
	return cmd
}

// CreateOptions are the inputs of `pipectl schedule create`.
type CreateOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory

	File, Name, Cron, Timezone, Concurrency, CatchUp string
	Params                                           []string
	Suspend                                          bool
	Now                                              func() time.Time
	// On is where it is kept (local or argo); Argo the cluster flags.
	On   string
	Argo ArgoFlags
}

// NewCmdCreate returns `pipectl schedule create`; runF replaces the run function in tests.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, Factory: f, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "create FILE --name NAME --cron CRON",
		Short: "Create a schedule of a pipeline file",
		Example: `  pipectl schedule create pipeline.yaml --name nightly --cron "0 2 * * *" --timezone Europe/Berlin \
    --concurrency Forbid --catch-up latest -p day='{{run.scheduledTime}}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := checkOn(opts.On); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	addOnFlag(cmd, f, &opts.On)
	addArgoFlags(cmd, f, &opts.Argo)
	fl := cmd.Flags()
	fl.StringVar(&opts.Name, "name", "", "the schedule's name: a DNS-1123 label of at most 52 characters")
	fl.StringVar(&opts.Cron, "cron", "", `when it runs: five cron fields (minute hour day-of-month month day-of-week), such as "0 2 * * *", or @hourly, @daily, @weekly, @monthly`)
	fl.StringVar(&opts.Timezone, "timezone", "", "the IANA time zone the cron is read in, such as Europe/Berlin (default UTC)")
	fl.StringVar(&opts.Concurrency, "concurrency", schedule.ConcurrencyAllow, "while a run of it runs, a due time: Allow (runs too), Forbid (is skipped) or Replace (cancels it)")
	fl.StringVar(&opts.CatchUp, "catch-up", schedule.CatchUpLatest, "times missed while no scheduler ran: all (run each), latest (run the newest) or none")
	fl.StringArrayVarP(&opts.Params, "param", "p", nil, "a pipeline parameter of its runs: -p name=value (repeatable); {{run.scheduledTime}} in a value is each run's time")
	fl.BoolVar(&opts.Suspend, "suspend", false, "create it suspended")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	params, err := pipeline.ParseOverrides(opts.Params)
	if err != nil {
		return podutil.FlagErrorf("%v", err)
	}
	abs, err := filepath.Abs(opts.File)
	if err != nil {
		return err
	}
	now := opts.Now()
	s := &schedule.Schedule{
		Name: opts.Name, Pipeline: abs, Cron: opts.Cron, Timezone: opts.Timezone, Params: params,
		Concurrency: opts.Concurrency, CatchUp: opts.CatchUp, Suspended: opts.Suspend, Created: now, Updated: now,
	}
	if err := checkFlags(s); err != nil {
		return err
	}
	p, err := s.CheckPipeline()
	if err != nil {
		return err
	}
	if opts.On == onArgo {
		return argoPut(ctx, opts.Factory, &opts.Argo, s, p, true)
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	if _, err := schedulestore.Get(ctx, store, s.Name); err == nil {
		return fmt.Errorf("schedule %q exists in %s: change it with 'pipectl schedule apply', or delete it first", s.Name, store.Root())
	} else if !errors.Is(err, schedulestore.ErrNotFound) {
		return err
	}
	if err := schedulestore.Put(ctx, store, s); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Schedule %s created: %s\n", s.Name, describe(s))
	return nil
}

// flagOf names the flag of each field a *schedule.FieldError names.
var flagOf = map[string]string{
	schedule.FieldName: "--name", schedule.FieldCron: "--cron", schedule.FieldTimezone: "--timezone",
	schedule.FieldConcurrency: "--concurrency", schedule.FieldCatchUp: "--catch-up", schedule.FieldPipeline: "FILE",
}

// checkFlags validates a schedule given by flags, naming each flag wrong.
func checkFlags(s *schedule.Schedule) error {
	err := s.Validate()
	if err == nil {
		return nil
	}
	var errs []error
	for _, e := range flatten(err) {
		var fe *schedule.FieldError
		if errors.As(e, &fe) && flagOf[fe.Field] != "" {
			e = fmt.Errorf("%s: %s", flagOf[fe.Field], fe.Msg)
		}
		errs = append(errs, e)
	}
	return &podutil.FlagError{Err: errors.Join(errs...)}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// describe is a schedule's when, in words.
func describe(s *schedule.Schedule) string {
	tz := s.Timezone
	if tz == "" {
		tz = "UTC"
	}
	return fmt.Sprintf("%q (%s) runs %s; concurrency %s, catch-up %s", s.Cron, tz, s.Pipeline, s.Concurrency, s.CatchUp)
}

// ApplyOptions are the inputs of `pipectl schedule apply`.
type ApplyOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	File    string
	Now     func() time.Time
	On      string
	Argo    ArgoFlags
}

// NewCmdApply returns `pipectl schedule apply`; runF replaces the run function in tests.
func NewCmdApply(f *cmdutil.Factory, runF func(*ApplyOptions) error) *cobra.Command {
	opts := &ApplyOptions{IO: f.IOStreams, Factory: f, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Create or update the schedule of a kind: Schedule file (idempotent)",
		Long: `Create the schedule a 'kind: Schedule' file declares, or update it to match the
file. Its pipeline file is relative to the schedule file. Applying an unchanged
file changes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := checkOn(opts.On); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return applyRun(cmd.Context(), opts)
		},
	}
	addOnFlag(cmd, f, &opts.On)
	addArgoFlags(cmd, f, &opts.Argo)
	return cmd
}

func applyRun(ctx context.Context, opts *ApplyOptions) error {
	s, err := schedule.Load(opts.File)
	if err != nil {
		return err
	}
	if s.Pipeline, err = filepath.Abs(s.Pipeline); err != nil {
		return err
	}
	if s.Source, err = filepath.Abs(s.Source); err != nil {
		return err
	}
	p, err := s.CheckPipeline()
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	if opts.On == onArgo {
		return argoPut(ctx, opts.Factory, &opts.Argo, s, p, false)
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	old, err := schedulestore.Get(ctx, store, s.Name)
	verb := "configured"
	switch {
	case errors.Is(err, schedulestore.ErrNotFound):
		verb, s.Created, s.Updated = "created", opts.Now(), opts.Now()
	case err != nil:
		return err
	default:
		s.Created, s.Updated = old.Created, old.Updated
		if reflect.DeepEqual(old, s) {
			fmt.Fprintf(opts.IO.ErrOut, "Schedule %s unchanged\n", s.Name)
			return nil
		}
		s.Updated = opts.Now()
	}
	if err := schedulestore.Put(ctx, store, s); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Schedule %s %s: %s\n", s.Name, verb, describe(s))
	return nil
}
