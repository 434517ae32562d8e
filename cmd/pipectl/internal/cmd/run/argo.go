package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/images"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/runview"
)

// ArgoOptions are the flags of `pipectl run --on argo`.
type ArgoOptions struct {
	// Pods are the compiled pods' settings (cmdutil.AddPodFlags).
	Pods argo.Options
	// PodS3Endpoint is the endpoint the pods use (default: --s3-endpoint).
	PodS3Endpoint string
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
	cmdutil.AddPodFlags(fl, &a.Pods, f.Version, "--on argo: ")
	fl.StringVar(&a.PodS3Endpoint, "pod-s3-endpoint", "", "--on argo: the S3 endpoint the pods use (default: --s3-endpoint)")
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
	var rec *record.Run
	var wf *wfv1.Workflow
	if a.Attach == "" {
		f.ClusterRuntimes = true // runtimes no --runtimes file gives are the cluster's
		l, err := cmdutil.LoadRun(ctx, f, opts.File, opts.Params, opts.Rerun, opts.From)
		if err != nil {
			return err
		}
		defer l.Cleanup()
		if err := cmdutil.TrustRerun(ios, l.Rerun, opts.Yes); err != nil {
			return err
		}
		start := &argorun.Start{
			Store: store, Pipeline: l.Pipeline, Params: l.Values, Source: l.Source, NoCache: opts.NoCache, Options: a.Pods,
			Origin: l.Origin(ctx, f), Status: ios.ErrOut, Import: imports.Options{ImportOptions: imports.ImportOptions{S3: f.StoreOptions.S3}, Images: images.Options{Insecure: a.Images.Insecure}},
			Pin: func(ctx context.Context, refs []string) (images.Result, error) { return a.Images.Resolve(ctx, f, refs) },
		}
		start.Options.Artifacts, start.Options.NoCache, start.Options.Params = f.Root(), opts.NoCache, l.Overrides
		// The pods are told the bucket's region (given, or as the service
		// reported it): their store asks for no bucket location.
		start.Options.S3Endpoint, start.Options.S3Region = cmp.Or(a.PodS3Endpoint, f.StoreOptions.S3.Endpoint), cmp.Or(f.StoreOptions.S3.Region, artifacts.Region(ctx, store))
		start.Options.ResumeFrom = resumeFrom(opts, l)
		if rec, wf, err = start.Run(ctx, f.Clients); err != nil {
			return err
		} else if wf == nil {
			return finish(opts, rec) // every step cached
		}
	} else {
		connect := func(ns string) (*argorun.Clients, error) {
			f.Kube.Namespace = cmp.Or(f.Kube.Namespace, ns) // -n wins
			return f.Clients()
		}
		if rec, wf, _, err = argorun.Attach(ctx, store, a.Attach, connect, ios.ErrOut); err != nil {
			return err
		}
	}
	return follow(opts, store, rec, wf.Name)
}

// follow follows the run's workflow to its end; Ctrl-C asks whether to
// stop it (--stop-on-exit: stop; no terminal: leave it running).
func follow(opts *Options, store artifacts.Store, rec *record.Run, name string) error {
	f, ios := opts.Factory, opts.IO
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	sigs, stopSignals := podutil.StopSignals(opts.Argo.Signals)
	defer stopSignals()
	w := &argorun.Watch{
		Clients: kc, Store: store, Record: rec, Name: name, Logs: ios.LogsOut(opts.Output), Status: ios.ErrOut, TTY: ios.ErrTTY, Poll: opts.Argo.Poll,
		Warn: func(err error) { fmt.Fprintf(ios.ErrOut, "Warning: %v\n", err) },
		Stop: func() bool { return opts.Argo.StopOnExit || ios.Confirm("\nStop workflow "+name+"?") },
	}
	var stopErr *argorun.StopError
	switch err := w.Run(sigs); {
	case errors.Is(err, argorun.ErrLeftRunning):
		self, ns := cmdutil.Program(), kc.Namespace
		fmt.Fprintf(ios.ErrOut, "\nWorkflow %s keeps running in namespace %s. Follow it again (Ctrl-C there offers to stop it):\n  %s run --on argo --attach %s -n %s\n", name, ns, self, name, ns)
		fmt.Fprintf(ios.ErrOut, "Look at it:\n  %s runs get %s -n %s\n  %s logs %s -n %s\n", self, name, ns, self, name, ns)
		return &podutil.ExitError{Code: podutil.ExitCancelled, Err: err, Silent: true}
	case errors.As(err, &stopErr):
		return &podutil.ExitError{Code: podutil.ExitCancelled, Err: err}
	case err != nil:
		return err
	}
	return finish(opts, rec)
}

// finish prints the summary (and the record with -o) and maps the status to
// the exit code.
func finish(opts *Options, rec *record.Run) error {
	runview.WriteSummary(opts.IO.ErrOut, rec)
	return cmdutil.EndRun(opts.IO.Out, opts.Output, rec)
}
