// Package pack is `pipectl pack ls [FOLDER]`: what a code pack of a folder
// would ship, and what it leaves out.
package pack

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/runview"
)

// Options are the inputs of `pipectl pack ls`.
type Options struct {
	IO     *podutil.IOStreams
	Dir    string
	Output string
}

// NewCmdPack returns `pipectl pack`; runF replaces the run function of
// `pack ls` in tests.
func NewCmdPack(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "See what a code pack ships",
	}
	cmd.AddCommand(newCmdLs(f, runF))
	return cmd
}

func newCmdLs(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Dir: "."}
	cmd := &cobra.Command{
		Use:   "ls [FOLDER]",
		Short: "List what a code pack of FOLDER ships, and what it leaves out",
		Long: `List every entry a code pack of FOLDER (default: the current folder) holds, as
'pipectl run' keeps a pipeline file's folder for --rerun and '--on argo' ships a
component's folder (an inline component's is the pipeline file's): path, type,
mode and size on stdout; the pack's digest and what it leaves out, with why, on
stderr (in -o json|yaml, all of it on stdout).

Left out wherever they are: version control and caches (.git, __pycache__,
.venv, .pipectl, ...); credentials:
  ` + credentialList() + `
and what the folder's .pipectlignore names (one path.Match pattern a line; a
pattern with a slash matches a path from the folder, one without a name at any
depth). A line "!PATTERN" ships what matches after all (the last matching line
decides; for a folder, name the folder: "!.aws").

A file that is not left out but looks like a credential (a private key, an AWS
secret access key, a registry login, a GitHub token in its first 64 KiB) is
refused, naming it: leave it out, or add "!PATH" to .pipectlignore to ship it
anyway. The same errors stop a run, so 'pack ls' is how to check a folder
before it ships.`,
		Example: `  pipectl pack ls examples/attrition
  pipectl pack ls components/train -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return lsRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func credentialList() string {
	s := ""
	for i, c := range codepack.Credentials {
		if i > 0 {
			s += " "
		}
		s += c
	}
	return s
}

func lsRun(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	l, err := codepack.List(ctx, opts.Dir, codepack.Defaults)
	if err != nil {
		return err
	}
	if opts.Output == podutil.FormatJSON || opts.Output == podutil.FormatYAML {
		return cmdutil.Print(opts.IO.Out, opts.Output, l, nil)
	}
	err = cmdutil.Print(opts.IO.Out, opts.Output, l, func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "PATH\tTYPE\tMODE\tSIZE")
		for _, e := range l.Entries {
			p, size := e.Path, runview.Bytes(e.Size)
			switch e.Type {
			case "folder":
				p, size = p+"/", ""
			case "link":
				p, size = p+" -> "+e.Link, ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p, e.Type, e.Mode, size)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Pack of %s: %s, %d entries, %s\n", opts.Dir, l.Digest, l.Files, runview.Bytes(l.Size))
	for _, o := range l.LeftOut {
		fmt.Fprintf(opts.IO.ErrOut, "left out: %s (%s)\n", o.Path, o.Reason)
	}
	return nil
}
