package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/images"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/scheduler"
)

// Backends of --on.
const (
	onLocal = "local"
	onArgo  = "argo"
)

// ArgoFlags are the cluster flags of `schedule create|apply --on argo`,
// those of `run --on argo`.
type ArgoFlags struct {
	Pods          argo.Options
	PodS3Endpoint string
	Images        cmdutil.ImageFlags
}

// addOnFlag adds --on and, with the kubeconfig flags, reads where the
// schedule is kept.
func addOnFlag(cmd *cobra.Command, f *cmdutil.Factory, on *string) {
	cmd.Flags().StringVar(on, "on", onLocal, "where the schedule is kept and fires: local (the artifact store, fired by 'pipectl schedule serve'), or argo (an Argo CronWorkflow in the cluster)")
	cmdutil.AddKubeFlags(cmd, f)
}

// checkOn refuses an --on other than local or argo.
func checkOn(on string) error {
	if on != onLocal && on != onArgo {
		return podutil.FlagErrorf("--on %s: want local or argo", on)
	}
	return nil
}

// addArgoFlags adds the cluster flags of create and apply.
func addArgoFlags(cmd *cobra.Command, f *cmdutil.Factory, a *ArgoFlags) {
	fl := cmd.Flags()
	cmdutil.AddPodFlags(fl, &a.Pods, f.Version, "--on argo: ")
	fl.StringVar(&a.PodS3Endpoint, "pod-s3-endpoint", "", "--on argo: the S3 endpoint the pods use (default: --s3-endpoint)")
	cmdutil.AddImageFlags(fl, &a.Images, "--on argo: ")
}

// argoPut compiles schedule s of pipeline p into a CronWorkflow and
// creates it (create) or creates or updates it.
func argoPut(ctx context.Context, f *cmdutil.Factory, a *ArgoFlags, s *schedule.Schedule, p *pipeline.Pipeline, create bool) error {
	if err := argo.CheckCron(s); err != nil {
		if s.Source != "" {
			return fmt.Errorf("%s: %w", s.Source, err)
		}
		return cronFlagError(err) // given by flags
	}
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	c := &argorun.Cron{
		Store: store, Pipeline: p, Schedule: s, Options: a.Pods, Status: f.IOStreams.ErrOut,
		Pin: func(ctx context.Context, refs []string) (images.Result, error) { return a.Images.Resolve(ctx, f, refs) },
	}
	c.Options.Artifacts = f.Root()
	c.Options.S3Endpoint, c.Options.S3Region = cmp.Or(a.PodS3Endpoint, f.StoreOptions.S3.Endpoint), cmp.Or(f.StoreOptions.S3.Region, artifacts.Region(ctx, store))
	cw, err := c.Compile(ctx, kc)
	if err != nil {
		return err
	}
	did, err := argorun.PutCron(ctx, kc, cw, create)
	if errors.Is(err, argorun.CronExists) {
		return fmt.Errorf("%w: change it with 'pipectl schedule apply --on argo', or delete it first", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s %s as CronWorkflow %s in namespace %s: %s\n", s.Name, did, cw.Name, kc.Namespace, describe(s))
	return nil
}

// argoView is the view of CronWorkflow cw: its schedule, next time, last
// scheduled time (Argo's) and, with runs, its runs (recorded in store as
// they are read).
func argoView(ctx context.Context, f *cmdutil.Factory, kc *argorun.Clients, cw *wfv1.CronWorkflow, runs bool) (View, error) {
	s, err := argorun.CronSchedule(cw)
	if err != nil {
		return View{}, err
	}
	v := View{Schedule: *s}
	if c, err := s.CronOf(); err == nil && !s.Suspended {
		v.Next = schedule.FormatTime(c.Next(time.Now()))
	}
	v.Last, _ = argorun.CronStatus(cw)
	if !runs {
		return v, nil
	}
	store, err := f.Store(ctx)
	if err != nil {
		return v, err
	}
	recs, err := argorun.ScheduledRuns(ctx, kc, store, cw.Name)
	if err != nil {
		return v, err
	}
	for _, r := range recs {
		v.Runs = append(v.Runs, RunView{Time: r.ScheduledTime, Run: r.ID, By: "argo", Status: r.Status})
	}
	if len(recs) > 0 {
		v.LastRun = recs[0].ID
	}
	return v, nil
}

// argoCron is the CronWorkflow of schedule name.
func argoCron(ctx context.Context, kc *argorun.Clients, name string) (*wfv1.CronWorkflow, error) {
	cw, err := kc.Workflows.ArgoprojV1alpha1().CronWorkflows(kc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no schedule %q in namespace %s", name, kc.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", name, err)
	}
	return cw, nil
}

// argoList lists the CronWorkflows pipectl made in the namespace.
func argoList(ctx context.Context, opts *ListOptions) error {
	kc, err := opts.Factory.Clients()
	if err != nil {
		return err
	}
	list, err := kc.Workflows.ArgoprojV1alpha1().CronWorkflows(kc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: argo.LabelSchedule})
	if err != nil {
		return fmt.Errorf("schedules in namespace %s: %w", kc.Namespace, err)
	}
	out := make([]View, 0, len(list.Items))
	for i := range list.Items {
		v, err := argoView(ctx, opts.Factory, kc, &list.Items[i], true)
		if err != nil {
			return err
		}
		v.Runs = nil
		out = append(out, v)
	}
	if len(out) == 0 && (opts.Output == podutil.FormatTable || opts.Output == "") {
		fmt.Fprintf(opts.IO.ErrOut, "No schedules in namespace %s\n", kc.Namespace)
		return nil
	}
	return printList(opts, out)
}

// argoGet shows the CronWorkflow of a schedule and its runs.
func argoGet(ctx context.Context, opts *GetOptions) error {
	kc, err := opts.Factory.Clients()
	if err != nil {
		return err
	}
	cw, err := argoCron(ctx, kc, opts.Name)
	if err != nil {
		return err
	}
	v, err := argoView(ctx, opts.Factory, kc, cw, true)
	if err != nil {
		return err
	}
	return printGet(opts, v)
}

// argoSuspend suspends or resumes a schedule's CronWorkflow.
func argoSuspend(ctx context.Context, f *cmdutil.Factory, name string, suspend bool) error {
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	cw, err := argoCron(ctx, kc, name)
	if err != nil {
		return err
	}
	if cw.Spec.Suspend == suspend {
		fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s is %s already\n", name, map[bool]string{true: "suspended", false: "active"}[suspend])
		return nil
	}
	cw.Spec.Suspend = suspend
	if _, err := kc.Workflows.ArgoprojV1alpha1().CronWorkflows(kc.Namespace).Update(ctx, cw, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s %s\n", name, map[bool]string{true: "suspended", false: "resumed"}[suspend])
	return nil
}

// argoDelete deletes a schedule's CronWorkflow. Its workflows go with it
// (Argo owns them by it): their runs are recorded first, and stay.
func argoDelete(ctx context.Context, f *cmdutil.Factory, name string) error {
	kc, err := f.Clients()
	if err != nil {
		return err
	}
	if _, err := argoCron(ctx, kc, name); err != nil {
		return err
	}
	store, err := f.Store(ctx)
	if err != nil {
		return err
	}
	if _, err := argorun.ScheduledRuns(ctx, kc, store, name); err != nil {
		return fmt.Errorf("schedule %s not deleted: %w", name, err)
	}
	if err := kc.Workflows.ArgoprojV1alpha1().CronWorkflows(kc.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Schedule %s deleted from namespace %s\n", name, kc.Namespace)
	return nil
}

// cronFlagError names the flag of a CheckCron error about a field.
func cronFlagError(err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "catchUp: "):
		return podutil.FlagErrorf("--catch-up: %s", strings.TrimPrefix(msg, "catchUp: "))
	case strings.HasPrefix(msg, "params."):
		return podutil.FlagErrorf("-p %s", strings.TrimPrefix(msg, "params."))
	}
	return err
}

// argoBackfill makes b a backfill of the schedule's CronWorkflow: its
// schedule, the times with a workflow or a run, each time's workflow
// submitted as Argo's cron controller would and waited for.
func argoBackfill(ctx context.Context, opts *BackfillOptions, b *scheduler.Backfill) error {
	kc, err := opts.Factory.Clients()
	if err != nil {
		return err
	}
	cw, err := argoCron(ctx, kc, opts.Name)
	if err != nil {
		return err
	}
	if b.Schedule, err = argorun.CronSchedule(cw); err != nil {
		return err
	}
	b.Ran = func(ctx context.Context, s *schedule.Schedule, times []time.Time) (map[string]bool, error) {
		return argorun.CronRan(ctx, kc, b.Store, s.Name, times)
	}
	b.Claim = func(ctx context.Context, _ *schedule.Schedule, at time.Time) (string, error) {
		return argorun.SubmitCronRun(ctx, kc, cw, at)
	}
	b.Run = func(ctx context.Context, _ *schedule.Schedule, _ time.Time, id string) (*record.Run, error) {
		return argorun.WaitCronRun(ctx, kc, b.Store, id, opts.Poll)
	}
	return nil
}
