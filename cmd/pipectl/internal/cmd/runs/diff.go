package runs

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runview"
)

// DiffOptions are the inputs of `pipectl runs diff`.
type DiffOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	RunIDs  []string
	Output  string
	// All shows the rows that do not differ too.
	All bool
}

// maxDiff bounds the runs of one diff, as the UI bounds a comparison.
const maxDiff = 12

// NewCmdDiff returns `pipectl runs diff`; runF replaces the run function in tests.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "diff RUN RUN [RUN...]",
		Short: "Show how runs differ: params, steps, code, images, fingerprints, origin and metrics",
		Long: `Show runs side by side, a column per run: their params; per step its status,
the digest of its code, its image and its fingerprint (the same fingerprint: the
same component, values, inputs and code); where each run came from (pipectl's
version, the git commit, branch and whether the checkout was dirty); and the
values of their Metrics outputs. Only the rows that differ are shown, unless
--all. RUN is a run id, or "latest"; local and cluster runs compare alike.
The UI's compare page shows the same rows.`,
		Example: `  pipectl runs diff attrition-20261204-101500-ab12cd34 latest
  pipectl runs diff A B -o json`,
		Args: cobra.RangeArgs(2, maxDiff),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunIDs = args
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.All, "all", false, "show the rows that do not differ too")
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func diffRun(ctx context.Context, opts *DiffOptions) error {
	reader, err := opts.Factory.Runs(ctx, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	var recs []*record.Run
	for _, id := range opts.RunIDs {
		r, err := reader.Get(ctx, id)
		if err != nil {
			return err
		}
		recs = append(recs, r)
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	c, err := runview.Compare(ctx, store, recs, runview.DefaultCompareLimits)
	if err != nil {
		return err
	}
	return cmdutil.Print(opts.IO.Out, opts.Output, c, func(tw *tabwriter.Writer) {
		writeDiff(tw, c, opts.All)
	})
}

// writeDiff writes the comparison's rows as a table, group by group: only
// those that differ unless all.
func writeDiff(tw *tabwriter.Writer, c *runview.Comparison, all bool) {
	head := []string{""}
	for _, r := range c.Runs {
		head = append(head, r.ID)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	shown := 0
	for _, g := range c.Groups() {
		var lines []string
		for _, row := range g.Rows {
			if !row.Differs && !all {
				continue
			}
			name := row.Name
			if row.Source != "" {
				name = row.Source + " " + row.Name
			}
			cells := []string{"  " + name}
			for _, v := range row.Values {
				cell := "-"
				if v != nil {
					cell = short(*v)
				}
				cells = append(cells, cell)
			}
			lines = append(lines, strings.Join(cells, "\t"))
		}
		if len(lines) > 0 {
			fmt.Fprintln(tw, g.Title+":")
			for _, l := range lines {
				fmt.Fprintln(tw, l)
			}
			shown += len(lines)
		}
	}
	if shown == 0 {
		fmt.Fprintln(tw, "No differences (--all shows every row).")
	}
	if c.Omitted > 0 {
		fmt.Fprintf(tw, "(%d Metrics output(s) left out: too large to compare)\n", c.Omitted)
	}
}

// short cuts a digest (64 hex digits, or sha256: and them) to its first 12
// digits for the table, as runs get does; -o json keeps them whole.
func short(v string) string {
	hex := strings.TrimPrefix(v, "sha256:")
	if len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return v
	}
	return hex[:12]
}
