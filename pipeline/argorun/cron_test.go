package argorun

import (
	"context"
	"errors"
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
