package cmdutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/record"
)

// AddOutputFlag registers -o/--output on cmd.
func AddOutputFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", podutil.FormatTable, "output format: table, json or yaml")
}

// Print writes v as JSON or YAML, or calls table for the table format.
func Print(w io.Writer, format string, v any, table func(tw *tabwriter.Writer)) error {
	switch format {
	case podutil.FormatJSON:
		b, err := artifacts.MarshalShallow(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case podutil.FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		table(tw)
		return tw.Flush()
	}
}

// EndRun prints a finished run's record in format (nothing for "" or
// table) on w and maps its status to the exit code: none when it
// succeeded, podutil.ExitCancelled when cancelled, else podutil.ExitError1 (silent: the
// run's summary said why).
func EndRun(w io.Writer, format string, rec *record.Run) error {
	if format != "" && format != podutil.FormatTable {
		if err := Print(w, format, rec, nil); err != nil {
			return err
		}
	}
	switch rec.Status {
	case record.StatusSucceeded:
		return nil
	case record.StatusCancelled:
		return &podutil.ExitError{Code: podutil.ExitCancelled, Err: fmt.Errorf("run %s cancelled", rec.ID), Silent: true}
	default:
		return &podutil.ExitError{Code: podutil.ExitError1, Err: fmt.Errorf("run %s failed", rec.ID), Silent: true}
	}
}

// Program is how to name pipectl in hints: as it was run when that was a
// relative path to a binary named pipectl (bin/pipectl), else "pipectl".
func Program() string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "pipectl" && !filepath.IsAbs(os.Args[0]) {
		return os.Args[0]
	}
	return "pipectl"
}
