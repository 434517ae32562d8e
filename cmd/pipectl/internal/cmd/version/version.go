// Package version is `pipectl version`.
package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

// Options are the inputs of `pipectl version`.
type Options struct {
	IO      *podutil.IOStreams
	Version string
}

// NewCmdVersion returns `pipectl version`; runF replaces the run function in tests.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Version: f.FullVersion()}
	return &cobra.Command{
		Use:   "version",
		Short: "Print pipectl's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *Options) error {
	_, err := fmt.Fprintln(opts.IO.Out, Line(opts.Version))
	return err
}

// Line is what `pipectl version` and `pipectl --version` print for version v.
func Line(v string) string {
	return fmt.Sprintf("pipectl %s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
