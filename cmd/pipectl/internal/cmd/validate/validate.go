// Package validate is `pipectl validate FILE...`.
package validate

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// Options are the inputs of `pipectl validate`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Files   []string
}

// NewCmdValidate returns `pipectl validate`; runF replaces the run function in tests.
func NewCmdValidate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check pipeline files and the components they use",
		Long: `Check pipeline files: strict YAML (unknown fields are errors), types, references
between steps, outputs and params, cycles, and names. Every problem is reported
as file:line:column with the field and what was expected. A Kubeflow Trainer
TrainJob file is checked as the pipeline of one distributed step it runs as
(see pipectl help kubeflow-trainer).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
}

func validateRun(opts *Options) error {
	bad := 0
	for _, file := range opts.Files {
		if data, err := os.ReadFile(file); err == nil && trainer.IsRuntimeFile(data) {
			if !validateRuntimes(opts, file) {
				bad++
			}
			continue
		}
		p, err := opts.Factory.Load(file)
		if err != nil {
			bad++
			for _, e := range yamlfile.Split(err) {
				fmt.Fprintln(opts.IO.ErrOut, e)
			}
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s: valid pipeline %s (%s)\n", file, p.Metadata.Name, stepCount(len(p.Steps)))
	}
	if bad > 0 {
		return &podutil.ExitError{Code: podutil.ExitError1, Err: fmt.Errorf("%d of %d files invalid", bad, len(opts.Files)), Silent: true}
	}
	return nil
}

// stepCount is "1 step" or "N steps".
func stepCount(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}

// validateRuntimes checks a file of Kubeflow Trainer runtimes: it loads,
// and says what a step naming each would be refused for and what is ignored.
func validateRuntimes(opts *Options, file string) bool {
	set, err := trainer.ReadRuntimes([]string{file})
	if err != nil {
		for _, e := range yamlfile.Split(err) {
			fmt.Fprintln(opts.IO.ErrOut, e)
		}
		return false
	}
	for _, name := range set.Names() {
		kind, n, _ := strings.Cut(name, "/")
		r, _ := set.Lookup(kind, n)
		for _, w := range r.Warnings {
			fmt.Fprintf(opts.IO.ErrOut, "Warning: %s\n", w)
		}
		for _, e := range r.Refused {
			fmt.Fprintf(opts.IO.ErrOut, "Refused (a step naming %s fails): %v\n", r.Name, e)
		}
		fmt.Fprintf(opts.IO.Out, "%s: valid %s %s (framework %s)\n", file, r.Kind, r.Name, cmp.Or(r.Framework, "none"))
	}
	return true
}
