package argorun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// labelCronWorkflow is the label Argo's cron controller puts on the
// workflows of a CronWorkflow (and counts as its active runs).
const labelCronWorkflow = "workflows.argoproj.io/cron-workflow"

// CronRunName is the name of the workflow of CronWorkflow name for
// scheduled time at, as Argo's cron controller names it: NAME-UNIXSECONDS.
// A time's run has one name whoever submits it (the controller or a
// backfill): creating it is claiming the time.
func CronRunName(name string, at time.Time) string {
	return name + "-" + strconv.FormatInt(at.Unix(), 10)
}

// CronRun is CronWorkflow cw's workflow for scheduled time at, as Argo's
// cron controller makes it: named CronRunName, annotated with the time
// (its {{workflow.scheduledTime}}), with the CronWorkflow's workflow
// metadata and labels, owned by cw. Pure.
func CronRun(cw *wfv1.CronWorkflow, at time.Time) *wfv1.Workflow {
	wf := &wfv1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			Name: CronRunName(cw.Name, at), Namespace: cw.Namespace,
			Labels:      map[string]string{labelCronWorkflow: cw.Name},
			Annotations: map[string]string{annotationScheduledTime: schedule.FormatTime(at)},
		},
		Spec: *cw.Spec.WorkflowSpec.DeepCopy(),
	}
	if md := cw.Spec.WorkflowMetadata; md != nil {
		maps.Copy(wf.Labels, md.Labels)
		maps.Copy(wf.Annotations, md.Annotations)
	}
	wf.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cw, wfv1.SchemeGroupVersion.WithKind("CronWorkflow"))}
	return wf
}

// CronRan returns which of times (in schedulestore.Stamp's form) have a
// run of CronWorkflow name: a workflow of it scheduled for that time, or,
// its workflow gone, a record of that run in the store.
func CronRan(ctx context.Context, kc *Clients, store artifacts.Store, name string, times []time.Time) (map[string]bool, error) {
	list, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: argo.LabelSchedule + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("schedule %s: its workflows: %w", name, err)
	}
	ran := map[string]bool{}
	for _, wf := range list.Items {
		if t, err := time.Parse(time.RFC3339, wf.Annotations[annotationScheduledTime]); err == nil {
			ran[schedulestore.Stamp(t)] = true
		}
	}
	for _, t := range times {
		if ran[schedulestore.Stamp(t)] {
			continue
		}
		_, err := recordstore.ReadRun(ctx, store, CronRunName(name, t))
		switch {
		case err == nil:
			ran[schedulestore.Stamp(t)] = true
		case !errors.Is(err, artifacts.ErrNotFound):
			return nil, fmt.Errorf("run %s: %w", CronRunName(name, t), err)
		}
	}
	return ran, nil
}

// SubmitCronRun creates the workflow of CronWorkflow cw for time at and
// returns its name; schedulestore.ErrClaimed when it exists (the
// controller or another backfill ran that time).
func SubmitCronRun(ctx context.Context, kc *Clients, cw *wfv1.CronWorkflow, at time.Time) (string, error) {
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Create(ctx, CronRun(cw, at), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("workflow %s: %w", CronRunName(cw.Name, at), schedulestore.ErrClaimed)
	}
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", CronRunName(cw.Name, at), err)
	}
	return wf.Name, nil
}

// WaitCronRun waits, polling every poll, until workflow name ended, and
// returns its run's record: the one it wrote itself, else (its record pod
// failed) the one the readers write. A workflow deleted meanwhile is an
// error. When ctx ends first (Ctrl-C of a backfill) the workflow is
// stopped, as a local backfill stops its runs, and followed to its end for
// at most StopTimeout: Argo's Stop still runs the exit handler that
// records the run.
func WaitCronRun(ctx context.Context, kc *Clients, store artifacts.Store, name string, poll time.Duration) (*record.Run, error) {
	rec, err := waitCron(ctx, kc, store, name, poll)
	if err == nil || ctx.Err() == nil {
		return rec, err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopTimeout)
	defer cancel()
	if err := Stop(sctx, kc, name); err != nil {
		return nil, fmt.Errorf("workflow %s: could not stop it: %w", name, err)
	}
	if rec, err = waitCron(sctx, kc, store, name, poll); err != nil {
		return nil, fmt.Errorf("workflow %s asked to stop: %w", name, err)
	}
	return rec, nil
}

// waitCron is WaitCronRun until ctx ends.
func waitCron(ctx context.Context, kc *Clients, store artifacts.Store, name string, poll time.Duration) (*record.Run, error) {
	api := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace)
	for {
		wf, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("workflow %s: %w", name, err)
		}
		if wf.Status.Phase.Completed() {
			if rec, err := recordstore.ReadRun(ctx, store, name); err == nil && rec.Status != record.StatusRunning {
				return rec, nil
			}
			return ScheduledRecord(ctx, store, wf)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("workflow %s still running: %w", name, ctx.Err())
		case <-time.After(poll):
		}
	}
}
