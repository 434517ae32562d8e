package cmdutil

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/artifacts"
)

// Output formats for -o.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// AddOutputFlag registers -o/--output on cmd.
func AddOutputFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", FormatTable, "output format: table, json or yaml")
}

// CheckFormat validates an -o value.
func CheckFormat(f string) error {
	switch f {
	case FormatTable, FormatJSON, FormatYAML, "":
		return nil
	}
	return FlagErrorf("-o %s: expected table, json or yaml", f)
}

// Print writes v as JSON or YAML, or calls table for the table format.
func Print(w io.Writer, format string, v any, table func(tw *tabwriter.Writer)) error {
	switch format {
	case FormatJSON:
		b, err := artifacts.MarshalShallow(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case FormatYAML:
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

// PrintOutputs reports a step's outputs on w, one line each, after who:
// "who: output NAME = VALUE" for a parameter, "who: output NAME → URI (N
// bytes)" for an artifact.
func PrintOutputs(w io.Writer, who string, records []artifacts.OutputRecord) {
	for _, r := range records {
		if r.Value != nil {
			fmt.Fprintf(w, "%s: output %s = %s\n", who, r.Name, *r.Value)
		} else {
			fmt.Fprintf(w, "%s: output %s → %s (%d bytes)\n", who, r.Name, r.URI, r.Size)
		}
	}
}
