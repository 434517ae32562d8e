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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/runview"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/origin"
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
	f := opts.Factory
	ios := opts.IO
	ctx := context.Background()
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var rec *artifacts.Run
	var wf *wfv1.Workflow
	var p *pipeline.Pipeline
	if opts.Argo.Attach == "" {
		var overrides, params map[string]string
		if p, overrides, params, err = loadPipeline(opts); err != nil {
			return err
		}
		// Every image pinned first: the cache lookup and the workflow
		// see the digests the pods will run.
		pinned, err := opts.Argo.Images.Resolve(ctx, f, argo.Images(p, argo.Options{Image: opts.Argo.Image}))
		if err != nil {
			return fmt.Errorf("run %s: %w", opts.File, err)
		}
		kc, err := f.Clients()
		if err != nil {
			return err
		}
		ao := argo.Options{
			Image:                  opts.Argo.Image,
			Artifacts:              f.Root(),
			AllowNonS3:             opts.Argo.AllowNonS3,
			Namespace:              kc.Namespace,
			ServiceAccount:         opts.Argo.ServiceAccount,
			LauncherServiceAccount: opts.Argo.LauncherServiceAccount,
			S3Secret:               opts.Argo.S3Secret,
			S3Endpoint:             cmp.Or(opts.Argo.PodS3Endpoint, f.StoreOptions.S3.Endpoint),
			S3Region:               f.StoreOptions.S3.Region,
			NoCache:                opts.NoCache,
			Params:                 overrides,
			Images:                 pinned.Pinned,
		}
		if err := ao.Check(); err != nil {
			return fmt.Errorf("compile %s: %w", opts.File, err)
		}
		// The pods run this checkout's code, fetched from the store.
		if err := argorun.ShipCode(ctx, store, p, ios.ErrOut); err != nil {
			return err
		}
		org := origin.Of(ctx, p, f.FullVersion())
		org.ImageTags = pinned.KeptTags
		if !opts.NoCache {
			// Every step known and cached before it runs: no workflow.
			rec, err := argorun.CachedRun(ctx, store, p, params, opts.File, kc.Namespace, org, pinned.Pinned)
			if err != nil {
				return err
			}
			if rec != nil {
				fmt.Fprintf(ios.ErrOut, "Every step is cached: run %s reuses their outputs (artifacts %s); no workflow submitted\n", rec.ID, store.URI(rec.ID))
				return finish(opts, rec)
			}
		}
		rec, wf, err = argorun.Submit(ctx, kc, store, p, params, opts.File, org, ao)
		if err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "Submitted workflow %s in namespace %s (artifacts %s)\n", wf.Name, kc.Namespace, store.URI(wf.Name))
	} else {
		// The run's record, when the store has one, names the run's
		// namespace (used unless -n says otherwise) and resolves "latest".
		if r, err := runstore.Stored(ctx, store, opts.Argo.Attach, ios.ErrOut); err == nil {
			opts.Argo.Attach = r.ID
			if f.Kube.Namespace == "" {
				f.Kube.Namespace = r.Namespace
			}
		} else if opts.Argo.Attach == "latest" {
			return err
		}
		kc, err := f.Clients()
		if err != nil {
			return err
		}
		if wf, err = kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Get(ctx, opts.Argo.Attach, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("attach %s: %w", opts.Argo.Attach, err)
		}
		if rec, err = artifacts.ReadRun(ctx, store, wf.Name); err != nil {
			if rec, err = argorun.RecordFromWorkflow(wf); err != nil {
				return fmt.Errorf("attach %s: %w", wf.Name, err)
			}
		}
		fmt.Fprintf(ios.ErrOut, "Following workflow %s in namespace %s\n", wf.Name, kc.Namespace)
	}
	return follow(opts, store, rec, wf.Name)
}

func follow(opts *Options, store artifacts.Store, rec *artifacts.Run, name string) error {
	f, ios := opts.Factory, opts.IO
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	sigs, stopSignals := cmdutil.StopSignals(opts.Argo.Signals)
	defer stopSignals()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()
	steps := make([]string, 0, len(rec.Steps))
	for _, s := range rec.Steps {
		steps = append(steps, s.Name)
	}
	logs := ios.Out
	if opts.Output != "" && opts.Output != cmdutil.FormatTable {
		logs = ios.ErrOut
	}
	fl := &argorun.Follower{Clients: kc, Name: name, Steps: steps, Logs: logs, Status: ios.ErrOut, TTY: ios.ErrTTY, Poll: opts.Argo.Poll}
	wf, ferr := fl.Follow(ctx)
	bg := context.Background()
	if ferr != nil {
		select {
		case <-interrupted:
			return interruptedRun(opts, kc, store, rec, fl, sigs)
		default:
		}
		if errors.Is(ferr, argorun.ErrDeleted) {
			if err := argorun.Deleted(bg, store, rec, wf); err != nil {
				fmt.Fprintf(ios.ErrOut, "Warning: run record: %v\n", err)
			}
		}
		return ferr
	}
	if err := argorun.Complete(bg, store, rec, wf, fl, warn(ios)); err != nil {
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

// interruptedRun handles Ctrl-C: stop the workflow when told to (or when
// the user says so on a terminal), else leave it running and say how to
// follow it again.
func interruptedRun(opts *Options, kc *argorun.Clients, store artifacts.Store, rec *artifacts.Run, followed *argorun.Follower, sigs <-chan os.Signal) error {
	ios := opts.IO
	name := followed.Name
	stop := opts.Argo.StopOnExit
	if !stop && ios.InTTY && ios.ErrTTY {
		fmt.Fprintf(ios.ErrOut, "\nStop workflow %s? [y/N] ", name)
		answer, _ := bufio.NewReader(ios.In).ReadString('\n')
		a := strings.ToLower(strings.TrimSpace(answer))
		stop = a == "y" || a == "yes"
	}
	if !stop {
		self, ns := program(), kc.Namespace
		fmt.Fprintf(ios.ErrOut, "\nWorkflow %s keeps running in namespace %s. Follow it again (Ctrl-C there offers to stop it):\n  %s run --on argo --attach %s -n %s\n", name, ns, self, name, ns)
		fmt.Fprintf(ios.ErrOut, "Look at it:\n  %s runs get %s -n %s\n  %s logs %s -n %s\n", self, name, ns, self, name, ns)
		return &cmdutil.ExitError{Code: cmdutil.ExitCancelled, Err: errors.New("interrupted"), Silent: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := argorun.Stop(ctx, kc, name); err != nil {
		return fmt.Errorf("stop workflow %s: %w", name, err)
	}
	fmt.Fprintf(ios.ErrOut, "\nStopping workflow %s…\n", name)
	fl := &argorun.Follower{Clients: kc, Name: name, Logs: ios.ErrOut, Status: ios.ErrOut, Poll: opts.Argo.Poll}
	wf, err := fl.Follow(ctx)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitCancelled, Err: fmt.Errorf("workflow %s asked to stop: %w", name, err)}
	}
	// The logs streamed until Ctrl-C: the launcher step's (its ranks') is kept nowhere else.
	if err := argorun.Complete(context.Background(), store, rec, wf, followed, warn(ios)); err != nil {
		return err
	}
	return finish(opts, rec)
}

// program is how to name pipectl in hints: as it was run when that was a path to a
// binary named pipectl (bin/pipectl), else "pipectl".
func program() string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "pipectl" && !filepath.IsAbs(os.Args[0]) {
		return os.Args[0]
	}
	return "pipectl"
}

// warn prints a warning that does not fail the run.
func warn(ios *cmdutil.IOStreams) func(error) {
	return func(err error) { fmt.Fprintf(ios.ErrOut, "Warning: %v\n", err) }
}
