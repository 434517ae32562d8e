// Package artifacts is `pipectl artifacts ls|get|cat`: browse and fetch outputs.
package artifacts

import (
	"context"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

// NewCmdArtifacts returns `pipectl artifacts`.
func NewCmdArtifacts(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifacts",
		Short: "List, fetch and print the outputs of runs",
		Long: `List, fetch and print the outputs of runs. An output is named by its URI
(file:///…, s3://…) or as RUN/STEP/OUTPUT; a file inside a directory output
as RUN/STEP/OUTPUT/PATH. Every byte read is checked against the sha256 in the
output's metadata.`,
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdCat(f, nil))
	return cmd
}

// ListOptions are the inputs of `pipectl artifacts ls`.
type ListOptions struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  string
}

// NewCmdList returns `pipectl artifacts ls`; runF replaces the run function in tests.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:     "ls RUN",
		Aliases: []string{"list"},
		Short:   "List a run's output artifacts",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if err := cmdutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Entry is one element of `pipectl artifacts ls -o json`; its fields are stable.
type Entry struct {
	Step   string `json:"step"`
	Output string `json:"output"`
	Type   string `json:"type"`
	URI    string `json:"uri"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Cached bool   `json:"cached,omitempty"`
}

// Entries returns the `artifacts ls -o json` entries of r: its artifact
// outputs (not its output parameters), step by step.
func Entries(r *artifacts.Run) []Entry {
	out := []Entry{}
	for _, s := range r.Steps {
		for _, o := range s.Outputs {
			if o.URI == "" {
				continue
			}
			out = append(out, Entry{Step: s.Name, Output: o.Name, Type: o.Type, URI: o.URI, Size: o.Size, SHA256: o.SHA256, Cached: s.Cached})
		}
	}
	return out
}

func listRun(ctx context.Context, opts *ListOptions) error {
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	r, err := cmdutil.ReadRun(ctx, store, opts.RunID)
	if err != nil {
		return err
	}
	out := Entries(r)
	return cmdutil.Print(opts.IO.Out, opts.Output, out, func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "STEP\tOUTPUT\tTYPE\tSIZE\tSHA256\tURI")
		for _, e := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.12s\t%s\n", e.Step, e.Output, e.Type, e.Size, e.SHA256, e.URI)
		}
	})
}

// GetOptions are the inputs of `pipectl artifacts get`.
type GetOptions struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	Ref     string
	Dest    string
}

// NewCmdGet returns `pipectl artifacts get`; runF replaces the run function in tests.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Factory: f}
	return &cobra.Command{
		Use:   "get REF DEST",
		Short: "Copy a whole file or directory output to DEST, verifying its sha256",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Dest = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return getRun(f.Progress(cmd.Context()), opts)
		},
	}
}

func getRun(ctx context.Context, opts *GetOptions) error {
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	name, err := cmdutil.ExpandLatest(ctx, store, opts.Ref)
	if err != nil {
		return err
	}
	ref, err := artifacts.Resolve(ctx, store, name)
	if err != nil {
		return err
	}
	dest := opts.Dest
	if ref.File != "" {
		e, _ := ref.Entry()
		return artifacts.CopyToFile(ctx, store, ref.Key+"/"+ref.File, dest, e.Size, e.SHA256)
	}
	meta, err := artifacts.Fetch(ctx, store, ref.Key, dest)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(dest)
	fmt.Fprintf(opts.IO.ErrOut, "Copied %s (%s, %d bytes, sha256 %s) to %s\n", store.URI(ref.Key), meta.Kind, meta.Size, meta.SHA256, abs)
	return nil
}

// CatOptions are the inputs of `pipectl artifacts cat`.
type CatOptions struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	Ref     string
}

// NewCmdCat returns `pipectl artifacts cat`; runF replaces the run function in tests.
func NewCmdCat(f *cmdutil.Factory, runF func(*CatOptions) error) *cobra.Command {
	opts := &CatOptions{IO: f.IOStreams, Factory: f}
	return &cobra.Command{
		Use:   "cat REF",
		Short: "Print a file output (or a file inside a directory output), verifying its sha256",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(opts)
			}
			return catRun(cmd.Context(), opts)
		},
	}
}

func catRun(ctx context.Context, opts *CatOptions) error {
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	name, err := cmdutil.ExpandLatest(ctx, store, opts.Ref)
	if err != nil {
		return err
	}
	ref, err := artifacts.Resolve(ctx, store, name)
	if err != nil {
		return err
	}
	if ref.File != "" {
		e, _ := ref.Entry()
		return artifacts.Copy(ctx, store, ref.Key+"/"+ref.File, opts.IO.Out, e.SHA256)
	}
	if ref.Meta.Kind == artifacts.KindDirectory {
		var names []string
		for _, e := range ref.Meta.Files {
			names = append(names, e.Path)
		}
		return fmt.Errorf("%s is a directory output; name one of its files: %s/%v", store.URI(ref.Key), opts.Ref, names)
	}
	return artifacts.Copy(ctx, store, ref.Key, opts.IO.Out, ref.Meta.SHA256)
}
