package artifacts

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// LineageOptions are the inputs of `pipectl artifacts lineage`.
type LineageOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Ref     string
	UsedBy  bool
	Output  string
}

// NewCmdLineage returns `pipectl artifacts lineage`; runF replaces the run function in tests.
func NewCmdLineage(f *cmdutil.Factory, runF func(*LineageOptions) error) *cobra.Command {
	opts := &LineageOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "lineage REF",
		Short: "Show how an output came to be, or with --used-by which steps read it",
		Long: `Show how an output came to be: the step that produced it (through the runs
that reused it from the cache), that step's code digest, image and its run's
params, and each input artifact it read (URI and sha256) with that input's own
lineage, back to the steps that read no artifact. With --used-by, list the
steps of every run that read the output's content (by sha256), from an index
the store keeps (no scan of the runs). REF is RUN/STEP/OUTPUT (RUN may be
"latest") or the output's URI.`,
		Example: `  pipectl artifacts lineage latest/evaluate/metrics
  pipectl artifacts lineage latest/preprocess/train --used-by`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return lineageRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.UsedBy, "used-by", false, "list the steps that read the output's content instead")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func lineageRun(ctx context.Context, opts *LineageOptions) error {
	runs, store, name, ref, err := resolve(ctx, opts.Factory, opts.IO, opts.Ref)
	if err != nil {
		return err
	}
	parts := strings.Split(ref.Key, "/")
	if ref.File != "" || len(parts) != 3 {
		return podutil.FlagErrorf("%s: want an output, RUN/STEP/OUTPUT, not a file inside one", opts.Ref)
	}
	if named := strings.Split(strings.Trim(name, "/"), "/"); !strings.Contains(name, "://") && len(named) == 3 {
		parts = named // the step as asked: a reused step's lineage says so
	}
	l, err := runview.TraceLineage(ctx, store, runs.Get, parts[0], parts[1], parts[2])
	if err != nil {
		return err
	}
	if !opts.UsedBy {
		if runview.HasCycle(l) {
			fmt.Fprintf(opts.IO.ErrOut, "warning: the lineage of %s has a cycle (an output that is its own ancestor): its run records were altered\n", opts.Ref)
		}
		return cmdutil.Print(opts.IO.Out, opts.Output, l, func(tw *tabwriter.Writer) { runview.WriteLineage(tw, l) })
	}
	if l.SHA256 == "" {
		return fmt.Errorf("%s has no sha256 (a parameter, not an artifact)", opts.Ref)
	}
	users, err := recordstore.ListConsumers(ctx, store, l.SHA256)
	if err != nil {
		return err
	}
	if users == nil {
		users = []record.Consumer{}
	}
	return cmdutil.Print(opts.IO.Out, opts.Output, users, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "Read by %d step(s) (content sha256 %s):\n", len(users), l.SHA256)
		fmt.Fprintln(tw, "RUN\tSTEP")
		for _, u := range users {
			fmt.Fprintf(tw, "%s\t%s\n", u.Run, u.Step)
		}
	})
}
