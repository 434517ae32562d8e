// Package artifacts is `pipectl artifacts ls|get|cat`: browse and fetch outputs.
package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runstore"
	"pipectl.dev/pipectl/pipeline/runview"
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
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdCat(f, nil), NewCmdLineage(f, nil))
	return cmd
}

// ListOptions are the inputs of `pipectl artifacts ls`.
type ListOptions struct {
	IO      *podutil.IOStreams
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
		Short:   "List a run's output artifacts, and its steps' checkpoints",
		Long: `List a run's output artifacts and, below them, the latest checkpoint of each
distributed step that kept one (its generation, files, size and time; in -o json
an entry with output ".checkpoint", type Checkpoint and its "checkpoint"). A
checkpoint is not an output of the step and no part of its fingerprint: it is
what a restart, a retry or a rerun of the step starts from (see: pipectl help
checkpoints).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if err := podutil.CheckFormat(opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	runs, err := opts.Factory.Runs(ctx, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	r, err := runs.Get(ctx, opts.RunID)
	if err != nil {
		return err
	}
	out := runview.Entries(r)
	ckpts, err := runview.CheckpointEntries(ctx, runs.Store(), r)
	if err != nil {
		return err
	}
	return cmdutil.Print(opts.IO.Out, opts.Output, append(out, ckpts...), func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "STEP\tOUTPUT\tTYPE\tSIZE\tSHA256\tURI")
		for _, e := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.12s\t%s\n", e.Step, e.Output, e.Type, e.Size, e.SHA256, e.URI)
		}
		runview.WriteCheckpoints(tw, ckpts)
	})
}

// GetOptions are the inputs of `pipectl artifacts get`.
type GetOptions struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	Ref     string
	Dest    string
	// Force replaces files that exist where the output's files go.
	Force bool
}

// NewCmdGet returns `pipectl artifacts get`; runF replaces the run function in tests.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "get REF DEST",
		Short: "Copy a whole file or directory output to DEST, verifying its sha256",
		Long: `Copy a whole file or directory output (or one file of a directory output) to
DEST, verifying its sha256. As with cp -r: when DEST is an existing directory,
or ends with /, the output is copied into it under its own name (DEST/OUTPUT);
otherwise it is copied to DEST. Nothing that exists is replaced unless --force
is given, and then only the files the output has: other files in an existing
directory stay. The data is written beside its destination and renamed into
place once verified, so an interrupted or failed copy leaves nothing behind.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref, opts.Dest = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(f.Progress(cmd.Context()), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return getRun(ctx, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace files that exist where the output's files go")
	return cmd
}

// Destination is where `pipectl artifacts get` writes an output (or file)
// named name when the user typed dest: inside dest when dest ends with a
// path separator or is an existing directory (as cp -r does), else dest.
func Destination(dest, name string) string {
	if strings.HasSuffix(dest, "/") || strings.HasSuffix(dest, string(filepath.Separator)) {
		return filepath.Join(dest, name)
	}
	if st, err := os.Stat(dest); err == nil && st.IsDir() {
		return filepath.Join(dest, name)
	}
	return dest
}

func getRun(ctx context.Context, opts *GetOptions) error {
	_, store, _, ref, err := resolve(ctx, opts.Factory, opts.IO, opts.Ref)
	if err != nil {
		return err
	}
	fo := artifacts.FetchOptions{Force: opts.Force}
	uri, base := store.URI(ref.Key), path.Base(ref.Key)
	if ref.File != "" {
		uri, base = store.URI(ref.Key+"/"+ref.File), path.Base(ref.File)
	}
	dest := Destination(opts.Dest, base)
	var meta artifacts.Metadata
	if ref.File != "" {
		e, _ := ref.Entry()
		err = artifacts.CopyToFile(ctx, store, ref.Key+"/"+ref.File, dest, e.Size, e.SHA256, fo)
		meta = artifacts.Metadata{Kind: artifacts.KindFile, Size: e.Size, SHA256: e.SHA256}
	} else {
		meta, err = artifacts.Fetch(ctx, store, ref.Key, dest, fo)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: nothing was copied (give another DEST, or --force to replace the files the output has)", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return &podutil.ExitError{Code: podutil.ExitCancelled, Err: fmt.Errorf("cancelled: nothing was copied to %s", dest)}
		}
		return err
	}
	abs, _ := filepath.Abs(dest)
	fmt.Fprintf(opts.IO.ErrOut, "Copied %s (%s, %d bytes, sha256 %s) to %s\n", uri, meta.Kind, meta.Size, meta.SHA256, abs)
	return nil
}

// CatOptions are the inputs of `pipectl artifacts cat`.
type CatOptions struct {
	IO      *podutil.IOStreams
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
	_, store, _, ref, err := resolve(ctx, opts.Factory, opts.IO, opts.Ref)
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

// resolve finds the output (or file in it) that ref names: RUN/STEP/OUTPUT
// with RUN a run id or "latest", or a URI in the store. It returns the
// run reader, the store, ref with "latest" expanded, and the output.
func resolve(ctx context.Context, f *cmdutil.Factory, ios *podutil.IOStreams, ref string) (*runstore.Reader, artifacts.Store, string, recordstore.Ref, error) {
	runs, err := f.Runs(ctx, ios.ErrOut)
	if err != nil {
		return nil, nil, "", recordstore.Ref{}, err
	}
	name, err := runs.ExpandLatest(ctx, ref)
	if err != nil {
		return nil, nil, "", recordstore.Ref{}, err
	}
	r, err := recordstore.Resolve(ctx, runs.Store(), name)
	return runs, runs.Store(), name, r, err
}
