package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/argorun"
)

// recordRunTimeout bounds the record pod's work.
const recordRunTimeout = 2 * time.Minute

// newCmdRecordRun returns `pipectl schedule record-run` (hidden): what a
// schedule's workflow on Argo runs to write its own run record
// (wire.RecordRun, argorun.RecordItself).
func newCmdRecordRun(f *cmdutil.Factory) *cobra.Command {
	var run, status string
	cmd := &cobra.Command{
		Use:    "record-run --run WORKFLOW --status STATUS",
		Short:  "Write the run record of a schedule's workflow on Argo (its own pods run it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == "" || status == "" {
				return podutil.FlagErrorf("want --%s and --%s", wire.RecordRunFlagRun, wire.RecordRunFlagStatus)
			}
			ctx, cancel := context.WithTimeout(context.Background(), recordRunTimeout)
			defer cancel()
			store, err := f.Store(ctx)
			if err != nil {
				return err
			}
			kc, err := f.Clients()
			if err != nil {
				return err
			}
			rec, err := argorun.RecordItself(ctx, kc, store, run, status, time.Now())
			if err != nil {
				return fmt.Errorf("run %s not recorded: %w", run, err)
			}
			fmt.Fprintf(f.IOStreams.ErrOut, "Run %s recorded: %s (schedule %s, scheduled time %s)\n", rec.ID, rec.Status, rec.Schedule, rec.ScheduledTime)
			return nil
		},
	}
	cmdutil.AddKubeFlags(cmd, f)
	cmd.Flags().StringVar(&run, wire.RecordRunFlagRun, "", "the workflow, which is the run")
	cmd.Flags().StringVar(&status, wire.RecordRunFlagStatus, "", "Running as it starts, else the workflow's status as it ends")
	return cmd
}
