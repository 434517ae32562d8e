// Package gc is `pipectl gc`: clean up after local runs whose runner died
// (killed, or its machine went down).
package gc

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Options are the inputs of `pipectl gc`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	// WorkDir is where local runs make their work directories.
	WorkDir string
}

// NewCmdGC returns `pipectl gc`; runF replaces the run function in tests.
func NewCmdGC(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Clean up after local runs whose runner died",
		Long: `Clean up after local runs whose runner died (on this machine, or on another
machine sharing the store, whose heartbeat stopped ten minutes ago): record each as
Failed ("runner died") for good, remove the partial uploads of every run that
no longer runs (a local store's temporary files, an S3 store's incomplete
multipart uploads), and remove the work directories of dead runners. Runs
that still run are left alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gcRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.WorkDir, "work-dir", os.TempDir(), "where local runs make their work directories")
	return cmd
}

func gcRun(ctx context.Context, opts *Options) error {
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	did, err := recordstore.CollectGarbage(ctx, store)
	for _, d := range did {
		fmt.Fprintln(opts.IO.ErrOut, d)
	}
	removed, werr := local.RemoveStaleWork(opts.WorkDir)
	for _, d := range removed {
		fmt.Fprintf(opts.IO.ErrOut, "removed work directory %s\n", d)
	}
	if errors.Is(werr, os.ErrNotExist) {
		werr = nil
	}
	if len(did)+len(removed) == 0 && err == nil && werr == nil {
		fmt.Fprintln(opts.IO.ErrOut, "nothing to clean up")
	}
	return errors.Join(err, werr)
}
