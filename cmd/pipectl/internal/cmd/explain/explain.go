// Package explain is `pipectl explain PATH`: the fields of pipeline and
// component files, as `kubectl explain` shows a resource's.
package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
)

// Options are the inputs of `pipectl explain`.
type Options struct {
	IO        *podutil.IOStreams
	Path      string
	Recursive bool
}

// NewCmdExplain returns `pipectl explain`; runF replaces the run function in tests.
func NewCmdExplain(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "explain [PATH]",
		Short: "Describe a field of pipeline and component files: type, default, values, what it does",
		Long: `Describe a field of a pipeline or component file, as kubectl explain does a
resource's: its type, default, allowed values and what it does, then its
fields. PATH is dotted from the file's top; a list's or a map's fields are
those of its items (steps.name, params.type). It starts at pipeline (the
default) or component.`,
		Example: `  pipectl explain                                  # a pipeline file's top fields
  pipectl explain steps.distributed                # a distributed step
  pipectl explain pipeline.steps.distributed.stallTimeout
  pipectl explain component.inputs                 # a component file's inputs
  pipectl explain steps --recursive                # every field of a step`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return pipeline.SchemaPaths(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = pipeline.RootPipeline
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return explainRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Recursive, "recursive", false, "list every field below PATH, nested, without descriptions")
	return cmd
}

func explainRun(opts *Options) error {
	f, err := pipeline.Explain(opts.Path)
	if err != nil {
		return err
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "FIELD:    %s <%s>%s\n", f.Name, f.Type, required(f))
	fmt.Fprintf(w, "PATH:     %s\n", f.Path)
	if f.Default != "" {
		fmt.Fprintf(w, "DEFAULT:  %s\n", f.Default)
	}
	if len(f.Values) > 0 {
		fmt.Fprintf(w, "VALUES:   %s\n", strings.Join(f.Values, ", "))
	}
	fmt.Fprintf(w, "\nDESCRIPTION:\n")
	wrap(w, f.Doc, "    ", 80)
	if len(f.Fields) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFIELDS:\n")
	if opts.Recursive {
		tree(w, f.Fields, "    ")
		return nil
	}
	for _, c := range f.Fields {
		fmt.Fprintf(w, "  %s\t<%s>%s\n", c.Name, c.Type, required(c))
		wrap(w, firstSentence(c.Doc), "    ", 80)
		fmt.Fprintln(w)
	}
	return nil
}

func required(f *pipeline.Field) string {
	if f.Required {
		return " -required-"
	}
	return ""
}

func tree(w io.Writer, fs []*pipeline.Field, indent string) {
	for _, c := range fs {
		fmt.Fprintf(w, "%s%s\t<%s>%s\n", indent, c.Name, c.Type, required(c))
		tree(w, c.Fields, indent+"  ")
	}
}

// firstSentence is text up to its first ". " (the whole text without one).
func firstSentence(text string) string {
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1]
	}
	return text
}

// wrap writes text in lines of at most width columns (a longer word
// alone), each after indent.
func wrap(w io.Writer, text, indent string, width int) {
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	if line != indent {
		fmt.Fprintln(w, line)
	}
}
