package run

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/runview"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/images"
	"pipectl.dev/pipectl/pipeline/runstore"
)

// ArgoOptions are the flags of `pipectl run --on argo`.
type ArgoOptions struct {
	Image                  string
	ServiceAccount         string
	LauncherServiceAccount string
	S3Secret               string
	// PodS3Endpoint is the endpoint the pods use (default: --s3-endpoint).
	PodS3Endpoint string
	AllowNonS3    bool
	// Attach follows an existing run instead of submitting one.
	Attach string
	// StopOnExit stops the workflow on Ctrl-C without asking.
	StopOnExit bool
	// Signals, when set, replaces SIGINT/SIGTERM (tests).
	Signals <-chan os.Signal
	// Poll is the follower's retry delay (tests).
	Poll time.Duration
	// Images pin the workflow's images to digests (or keep their tags).
	Images cmdutil.ImageFlags
}

func addArgoFlags(cmd *cobra.Command, f *cmdutil.Factory, opts *Options) {
	fl := cmd.Flags()
	a := &opts.Argo
	fl.StringVar(&a.Image, "image", "pipectl:"+f.Version, "--on argo: the pipectl image of the init containers and launcher pods")
	fl.StringVar(&a.ServiceAccount, "service-account", "", "--on argo: the ServiceAccount of step pods (needs Argo's executor RBAC)")
	fl.StringVar(&a.LauncherServiceAccount, "launcher-service-account", argo.DefaultLauncherServiceAccount, "--on argo: the ServiceAccount of launcher pods")
	fl.StringVar(&a.S3Secret, "s3-secret", "", "--on argo: a Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the pods")
	fl.StringVar(&a.PodS3Endpoint, "pod-s3-endpoint", "", "--on argo: the S3 endpoint the pods use (default: --s3-endpoint)")
	fl.BoolVar(&a.AllowNonS3, "allow-non-s3", false, "--on argo: accept an --artifacts root that is not s3:// (every pod must see the same path)")
	fl.StringVar(&a.Attach, "attach", "", "--on argo: follow the run RUN (a workflow, or \"latest\") instead of submitting one; its record names its namespace")
	fl.BoolVar(&a.StopOnExit, "stop-on-exit", false, "--on argo: on Ctrl-C, stop the workflow without asking")
	cmdutil.AddImageFlags(fl, &a.Images, "--on argo: ")
	cmdutil.AddKubeFlags(cmd, f)
}

// argoRun compiles, submits and follows a run on Argo (or attaches to one).
func argoRun(opts *Options) error {
	f, ios, a := opts.Factory, opts.IO, &opts.Argo
	ctx := context.Background()
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var rec *artifacts.Run
	var wf *wfv1.Workflow
	if a.Attach == "" {
		p, overrides, params, err := loadPipeline(opts)
		if err != nil {
			return err
		}
		start := &argorun.Start{
			Store: store, Pipeline: p, Params: params, Source: opts.File, NoCache: opts.NoCache,
			Version: f.FullVersion(), Status: ios.ErrOut,
			Pin: func(ctx context.Context, refs []string) (images.Result, error) { return a.Images.Resolve(ctx, f, refs) },
			Options: argo.Options{
				Image: a.Image, Artifacts: f.Root(), AllowNonS3: a.AllowNonS3, NoCache: opts.NoCache, Params: overrides,
				ServiceAccount: a.ServiceAccount, LauncherServiceAccount: a.LauncherServiceAccount, S3Secret: a.S3Secret,
				S3Endpoint: cmp.Or(a.PodS3Endpoint, f.StoreOptions.S3.Endpoint), S3Region: f.StoreOptions.S3.Region,
			},
		}
		if rec, wf, err = start.Run(ctx, f.Clients); err != nil || wf == nil {
			if err != nil {
				return err
			}
			return finish(opts, rec)
		}
	} else {
		// The run's record, when the store has one, names the run's
		// namespace (used unless -n says otherwise) and resolves "latest".
		if r, err := runstore.Stored(ctx, store, a.Attach, ios.ErrOut); err == nil {
			a.Attach = r.ID
			f.Kube.Namespace = cmp.Or(f.Kube.Namespace, r.Namespace)
		} else if a.Attach == "latest" {
			return err
		}
		kc, err := f.Clients()
		if err != nil {
			return err
		}
		if rec, wf, err = argorun.Attach(ctx, store, kc, a.Attach); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "Following workflow %s in namespace %s\n", wf.Name, kc.Namespace)
	}
	return follow(opts, store, rec, wf.Name)
}

// follow follows the run's workflow to its end; Ctrl-C asks whether to
// stop it (--stop-on-exit: stop; no terminal: leave it running).
func follow(opts *Options, store artifacts.Store, rec *artifacts.Run, name string) error {
	f, ios := opts.Factory, opts.IO
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	sigs, stopSignals := cmdutil.StopSignals(opts.Argo.Signals)
	defer stopSignals()
	logs := ios.Out
	if opts.Output != "" && opts.Output != cmdutil.FormatTable {
		logs = ios.ErrOut
	}
	w := &argorun.Watch{
		Clients: kc, Store: store, Record: rec, Name: name, Logs: logs, Status: ios.ErrOut, TTY: ios.ErrTTY, Poll: opts.Argo.Poll,
		Warn: func(err error) { fmt.Fprintf(ios.ErrOut, "Warning: %v\n", err) },
		Stop: func() bool {
			if opts.Argo.StopOnExit || !ios.InTTY || !ios.ErrTTY {
				return opts.Argo.StopOnExit
			}
			fmt.Fprintf(ios.ErrOut, "\nStop workflow %s? [y/N] ", name)
			answer, _ := bufio.NewReader(ios.In).ReadString('\n')
			a := strings.ToLower(strings.TrimSpace(answer))
			return a == "y" || a == "yes"
		},
	}
	var stopErr *argorun.StopError
	switch err := w.Run(sigs); {
	case errors.Is(err, argorun.ErrLeftRunning):
		self, ns := program(), kc.Namespace
		fmt.Fprintf(ios.ErrOut, "\nWorkflow %s keeps running in namespace %s. Follow it again (Ctrl-C there offers to stop it):\n  %s run --on argo --attach %s -n %s\n", name, ns, self, name, ns)
		fmt.Fprintf(ios.ErrOut, "Look at it:\n  %s runs get %s -n %s\n  %s logs %s -n %s\n", self, name, ns, self, name, ns)
		return &cmdutil.ExitError{Code: cmdutil.ExitCancelled, Err: err, Silent: true}
	case errors.As(err, &stopErr):
		return &cmdutil.ExitError{Code: cmdutil.ExitCancelled, Err: err}
	case err != nil:
		return err
	}
	return finish(opts, rec)
}

// finish prints the summary (and the record with -o) and maps the status to
// the exit code.
func finish(opts *Options, rec *artifacts.Run) error {
	ios := opts.IO
	if opts.Output != "" && opts.Output != cmdutil.FormatTable {
		if err := cmdutil.Print(ios.Out, opts.Output, rec, nil); err != nil {
			return err
		}
	}
	runview.WriteSummary(ios.ErrOut, rec)
	switch rec.Status {
	case artifacts.StatusSucceeded:
		return nil
	case artifacts.StatusCancelled:
		return &cmdutil.ExitError{Code: cmdutil.ExitCancelled, Err: fmt.Errorf("run %s cancelled", rec.ID), Silent: true}
	default:
		return &cmdutil.ExitError{Code: cmdutil.ExitError1, Err: fmt.Errorf("run %s failed", rec.ID), Silent: true}
	}
}

// program is how to name pipectl in hints: as it was run when that was a path to a
// binary named pipectl (bin/pipectl), else "pipectl".
func program() string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "pipectl" && !filepath.IsAbs(os.Args[0]) {
		return os.Args[0]
	}
	return "pipectl"
}
