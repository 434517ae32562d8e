package schedule

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/scheduler"
)

// ServeOptions are the inputs of `pipectl schedule serve`.
type ServeOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	// Poll is how often the schedules are read again.
	Poll time.Duration
	// On is the backend: only local schedules are served.
	On string
}

// NewCmdServe returns `pipectl schedule serve`; runF replaces the run function in tests.
func NewCmdServe(f *cmdutil.Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the schedules of the store as they come due, in the foreground",
		Long: `Run each schedule's pipeline on this machine as its times come due, until
Ctrl-C (which cancels the runs under way and waits for them). Run logs go to
stdout, what the scheduler does to stderr.

A time is claimed in the store before its run starts, so no time runs twice,
also when serve is killed and started again or two serve processes share a
store. The times missed while no serve ran are handled by each schedule's
catch-up policy when serve starts again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.On {
			case onLocal:
			case onArgo:
				return podutil.FlagErrorf("--on argo: nothing to serve: Argo's cron controller fires a schedule's CronWorkflow in the cluster (see 'pipectl schedule ls --on argo'); serve runs the schedules kept in the artifact store on this machine")
			default:
				return checkOn(opts.On)
			}
			if opts.Poll <= 0 {
				return podutil.FlagErrorf("--poll %s: want a duration above 0", opts.Poll)
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.On, "on", onLocal, "local only: on argo, Argo's cron controller fires the schedules")
	cmd.Flags().DurationVar(&opts.Poll, "poll", 10*time.Second, "how often the schedules are read again (created, changed, deleted)")
	return cmd
}

func serveRun(opts *ServeOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Serving the schedules of %s (Ctrl-C stops)\n", store.Root())
	sc := &scheduler.Scheduler{Store: store, Run: localRuns(opts.Factory), Status: opts.IO.ErrOut, Poll: opts.Poll}
	if err := sc.Serve(ctx); err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.ErrOut, "Stopped")
	return nil
}
