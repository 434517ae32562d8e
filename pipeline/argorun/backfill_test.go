package argorun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// A backfilled time's workflow is the one Argo's cron controller would
// make (name, scheduled-time annotation, labels, owner); submitting it
// twice is a claimed time; a time with a workflow, or with a record whose
// workflow is gone, has a run; waiting returns the record it wrote.
func TestCronBackfill(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cw := &wfv1.CronWorkflow{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ml", UID: "u1"},
		Spec: wfv1.CronWorkflowSpec{
			WorkflowMetadata: &metav1.ObjectMeta{Labels: map[string]string{argo.LabelSchedule: "nightly"}, Annotations: map[string]string{"a": "b"}},
			WorkflowSpec:     wfv1.WorkflowSpec{Entrypoint: argo.EntryTemplate},
		},
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 2, 0, 0, 0, berlin) }
	wf := CronRun(cw, day(1))
	if wf.Name != "nightly-1767229200" || wf.Annotations[annotationScheduledTime] != "2026-01-01T02:00:00+01:00" || wf.Annotations["a"] != "b" ||
		wf.Labels[argo.LabelSchedule] != "nightly" || wf.Labels[labelCronWorkflow] != "nightly" || wf.OwnerReferences[0].UID != "u1" || wf.Spec.Entrypoint != argo.EntryTemplate {
		t.Fatalf("workflow: %+v", wf)
	}
	kc := &Clients{Workflows: wffake.NewSimpleClientset(), Namespace: "ml"}
	if name, err := SubmitCronRun(ctx, kc, cw, day(1)); err != nil || name != "nightly-1767229200" {
		t.Fatalf("submit: %q, %v", name, err)
	}
	if _, err := SubmitCronRun(ctx, kc, cw, day(1)); !errors.Is(err, schedulestore.ErrClaimed) {
		t.Fatalf("second submit: %v", err)
	}
	// Day 2's workflow is gone, its record kept.
	if err := recordstore.WriteRun(ctx, store, &record.Run{ID: CronRunName("nightly", day(2)), Status: record.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	ran, err := CronRan(ctx, kc, store, "nightly", []time.Time{day(1), day(2), day(3)})
	if err != nil || !ran[schedulestore.Stamp(day(1))] || !ran[schedulestore.Stamp(day(2))] || ran[schedulestore.Stamp(day(3))] {
		t.Fatalf("ran: %v, %v", ran, err)
	}

	// The workflow ends and has written its record.
	done := wf.DeepCopy()
	done.Status.Phase = wfv1.WorkflowSucceeded
	if _, err := kc.Workflows.ArgoprojV1alpha1().Workflows("ml").Update(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := recordstore.WriteRun(ctx, store, &record.Run{ID: wf.Name, Status: record.StatusSucceeded, Schedule: "nightly"}); err != nil {
		t.Fatal(err)
	}
	rec, err := WaitCronRun(ctx, kc, store, wf.Name, time.Millisecond)
	if err != nil || rec.Status != record.StatusSucceeded || rec.Schedule != "nightly" {
		t.Fatalf("wait: %+v, %v", rec, err)
	}
	// Interrupted, the wait stops its workflow (Argo's Stop, whose exit
	// handler records the run) and returns the record once it ended.
	if _, err := SubmitCronRun(ctx, kc, cw, day(3)); err != nil {
		t.Fatal(err)
	}
	name3 := CronRunName("nightly", day(3))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	go func() { // the controller: a stopped workflow fails, its exit handler records it
		api := kc.Workflows.ArgoprojV1alpha1().Workflows("ml")
		for ctx.Err() == nil {
			if w, err := api.Get(ctx, name3, metav1.GetOptions{}); err == nil && w.Spec.Shutdown == wfv1.ShutdownStrategyStop {
				w.Status.Phase = wfv1.WorkflowFailed
				_ = recordstore.WriteRun(ctx, store, &record.Run{ID: name3, Status: record.StatusCancelled, Schedule: "nightly"})
				_, _ = api.Update(ctx, w, metav1.UpdateOptions{})
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	rec, err = WaitCronRun(cctx, kc, store, name3, time.Millisecond)
	if err != nil || rec.Status != record.StatusCancelled {
		t.Fatalf("an interrupted wait: %+v, %v; want the stopped run's record", rec, err)
	}
	// A workflow that cannot be stopped (gone) is an error naming it.
	if err := kc.Workflows.ArgoprojV1alpha1().Workflows("ml").Delete(ctx, name3, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitCronRun(cctx, kc, store, name3, time.Hour); err == nil || !strings.Contains(err.Error(), name3) {
		t.Fatalf("a cancelled wait on a workflow gone: %v", err)
	}
}
