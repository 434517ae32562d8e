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
)

// cronWorkflow is a workflow Argo's cron controller made for schedule
// nightly at time at, of one step "make" in phase phase.
func cronWorkflow(name, at string, phase wfv1.WorkflowPhase) *wfv1.Workflow {
	node := wfv1.NodePhase(phase)
	return &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", CreationTimestamp: metav1.NewTime(time.Unix(100, 0)),
			Labels:      map[string]string{argo.LabelSchedule: "nightly"},
			Annotations: map[string]string{annotationScheduledTime: at}},
		Spec:   wfv1.WorkflowSpec{Templates: []wfv1.Template{{Name: argo.EntryTemplate, DAG: &wfv1.DAGTemplate{Tasks: []wfv1.DAGTask{{Name: "make"}}}}}},
		Status: wfv1.WorkflowStatus{Phase: phase, Nodes: wfv1.Nodes{"n1": {ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: name, Phase: node}}},
	}
}

// The runs of a CronWorkflow, which no pipectl process submitted, get
// their records (schedule, scheduled time) from the first look at the
// schedule, and their final record once their workflow ended.
func TestScheduledRunsRecordTheCronWorkflowsRuns(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := cronWorkflow("nightly-1", "2026-12-06T02:00:00Z", wfv1.WorkflowFailed)
	cur := cronWorkflow("nightly-2", "2026-12-07T02:00:00Z", wfv1.WorkflowRunning)
	other := cronWorkflow("other-1", "2026-12-07T02:00:00Z", wfv1.WorkflowRunning)
	other.Labels[argo.LabelSchedule] = "other"
	wfs := wffake.NewSimpleClientset(old, cur, other)
	kc := &Clients{Workflows: wfs, Namespace: "ml"}
	runs, err := ScheduledRuns(ctx, kc, store, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "nightly-2" || runs[1].ID != "nightly-1" {
		t.Fatalf("runs: %+v", runs)
	}
	for i, want := range []string{record.StatusRunning, record.StatusFailed} {
		got, err := recordstore.ReadRun(ctx, store, runs[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want || got.Schedule != "nightly" || got.On != On || got.Namespace != "ml" || len(got.Steps) != 1 {
			t.Fatalf("record %s: %+v", runs[i].ID, got)
		}
	}
	if got, _ := recordstore.ReadRun(ctx, store, "nightly-2"); got.ScheduledTime != "2026-12-07T02:00:00Z" {
		t.Fatalf("scheduled time %q", got.ScheduledTime)
	}
	if _, err := recordstore.ReadRun(ctx, store, "other-1"); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("another schedule's run recorded: %v", err)
	}
	// The running one ends: the next look writes its final record.
	cur.Status.Phase, cur.Status.Nodes["n1"] = wfv1.WorkflowSucceeded, wfv1.NodeStatus{ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: "nightly-2", Phase: wfv1.NodeSucceeded}
	if _, err := wfs.ArgoprojV1alpha1().Workflows("ml").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ScheduledRuns(ctx, kc, store, "nightly"); err != nil {
		t.Fatal(err)
	}
	got, err := recordstore.ReadRun(ctx, store, "nightly-2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != record.StatusSucceeded || got.Steps[0].Status != record.StatusSucceeded || got.ScheduledTime != "2026-12-07T02:00:00Z" {
		t.Fatalf("final record: %+v", got)
	}
}

// PutCron creates a CronWorkflow, leaves an equal one unchanged, updates a
// changed one, and create refuses an existing one.
func TestPutCronIsIdempotent(t *testing.T) {
	ctx := context.Background()
	kc := &Clients{Workflows: wffake.NewSimpleClientset(), Namespace: "ml"}
	cw := &wfv1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ml"}, Spec: wfv1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}}
	for i, want := range []string{"created", "unchanged"} {
		if got, err := PutCron(ctx, kc, cw.DeepCopy(), false); err != nil || got != want {
			t.Fatalf("put %d: %q, %v; want %q", i, got, err, want)
		}
	}
	if _, err := PutCron(ctx, kc, cw.DeepCopy(), true); !errors.Is(err, CronExists) {
		t.Fatalf("create of an existing one: %v", err)
	}
	cw.Spec.Schedules = []string{"0 3 * * *"}
	if got, err := PutCron(ctx, kc, cw.DeepCopy(), false); err != nil || got != "configured" {
		t.Fatalf("put changed: %q, %v", got, err)
	}
	stored, err := kc.Workflows.ArgoprojV1alpha1().CronWorkflows("ml").Get(ctx, "nightly", metav1.GetOptions{})
	if err != nil || stored.Spec.Schedules[0] != "0 3 * * *" {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
}

// A schedule's workflow records itself: as it starts (Running, kept when
// the store has a record), and from its exit handler (the workflow still
// Running) with the status it ended with; a failed finally step fails a
// succeeded run; an unknown status is refused.
func TestRecordItself(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wf := cronWorkflow("nightly-3", "2026-12-07T02:00:00+01:00", wfv1.WorkflowRunning)
	kc := &Clients{Workflows: wffake.NewSimpleClientset(wf), Namespace: "ml"}
	rec, err := RecordItself(ctx, kc, store, "nightly-3", "Running", time.Unix(200, 0))
	if err != nil || rec.Status != record.StatusRunning || rec.Schedule != "nightly" || rec.ScheduledTime != "2026-12-07T02:00:00+01:00" {
		t.Fatalf("start: %+v, %v", rec, err)
	}
	// The step ended; the exit handler runs while the workflow is Running.
	wf.Status.Nodes["n1"] = wfv1.NodeStatus{ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: wf.Name, Phase: wfv1.NodeSucceeded}
	if _, err := kc.Workflows.ArgoprojV1alpha1().Workflows("ml").Update(ctx, wf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := RecordItself(ctx, kc, store, "nightly-3", "Running", time.Unix(200, 0)); err != nil {
		t.Fatal(err)
	}
	if got, _ := recordstore.ReadRun(ctx, store, "nightly-3"); got.Steps[0].Status != record.StatusRunning {
		t.Fatalf("a second start rewrote the record: %+v", got)
	}
	if _, err := RecordItself(ctx, kc, store, "nightly-3", "Succeeded", time.Unix(300, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := recordstore.ReadRun(ctx, store, "nightly-3")
	if err != nil || got.Status != record.StatusSucceeded || got.Finished == nil || !got.Finished.Equal(time.Unix(300, 0)) ||
		got.Steps[0].Status != record.StatusSucceeded || got.Schedule != "nightly" {
		t.Fatalf("end: %+v, %v", got, err)
	}

	failed := cronWorkflow("nightly-4", "2026-12-08T02:00:00Z", wfv1.WorkflowRunning)
	failed.Status.Nodes["n1"] = wfv1.NodeStatus{ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: failed.Name, Phase: wfv1.NodeFailed}
	kc = &Clients{Workflows: wffake.NewSimpleClientset(failed), Namespace: "ml"}
	if rec, err := RecordItself(ctx, kc, store, "nightly-4", "Succeeded", time.Unix(300, 0)); err != nil || rec.Status != record.StatusFailed {
		t.Fatalf("a failed step in a Succeeded run: %+v, %v", rec, err)
	}
	if _, err := RecordItself(ctx, kc, store, "nightly-4", "Done", time.Unix(300, 0)); err == nil || !strings.Contains(err.Error(), `status "Done"`) {
		t.Fatalf("an unknown status: %v", err)
	}
}
