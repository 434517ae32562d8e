package argorun

import (
	"context"
	"errors"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// A detached run's record is completed by the first reader that finds its
// workflow ended, with the artifact outputs found in the store.
func TestRefreshWritesTheFinalRecord(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "wf-1", Pipeline: "p", Status: record.StatusRunning, On: On, Started: time.Unix(1, 0),
		Steps: []record.StepRecord{{Name: "make", Status: record.StatusPending, Outputs: []record.OutputRecord{}}}}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	outputs := []record.OutputRecord{
		{Name: "data", Type: "Dataset", URI: store.URI("wf-1/make/data"), Size: 3, SHA256: "ba7816bf"},
		{Name: "rows", Type: "int", Value: str("3")},
	}
	if err := recordstore.WriteOutputs(ctx, store, "wf-1", "make", outputs); err != nil {
		t.Fatal(err)
	}
	exit := "0"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowSucceeded, FinishedAt: metav1.NewTime(time.Unix(9, 0)),
		Nodes: wfv1.Nodes{"n1": {ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: wfv1.NodeSucceeded,
			Outputs: &wfv1.Outputs{ExitCode: &exit, Parameters: []wfv1.Parameter{{Name: "rows", Value: wfv1.AnyStringPtr("3")}}}}},
	}}
	f := func() (*Clients, error) {
		return &Clients{Workflows: wffake.NewSimpleClientset(wf), Namespace: "ml"}, nil
	}
	got, err := Refresh(ctx, f, store, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != record.StatusSucceeded {
		t.Fatalf("refreshed record: %+v", got)
	}
	// The outputs, each with its declared type (an output parameter the
	// workflow carries was once recorded as a string), come from the step's
	// outputs record.
	if diff := cmp.Diff(outputs, got.Steps[0].Outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	stored, err := recordstore.ReadRun(ctx, store, "wf-1")
	if err != nil || stored.Status != record.StatusSucceeded {
		t.Errorf("stored record: %+v, %v", stored, err)
	}
	if rec.Status != record.StatusRunning {
		t.Errorf("Refresh changed its argument")
	}

	// No cluster: the record as stored, and why.
	f = func() (*Clients, error) { return nil, errors.New("no kubeconfig") }
	if got, err := Refresh(ctx, f, store, rec); got != rec || err == nil {
		t.Errorf("Refresh without a cluster = %p, %v; want the record unchanged and an error", got, err)
	}
}

// A run known only by its workflow gets the DAG's edges from the tasks'
// depends expressions.
func TestRecordFromWorkflowDependsOn(t *testing.T) {
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1"}, Spec: wfv1.WorkflowSpec{Templates: []wfv1.Template{{
		Name: argo.EntryTemplate,
		DAG: &wfv1.DAGTemplate{Tasks: []wfv1.DAGTask{
			{Name: "prep"}, {Name: "step-1a", Depends: "prep.Succeeded"}, {Name: "eval", Depends: "prep.Succeeded && step-1a.Succeeded"},
		}},
	}}}}
	rec, err := RecordFromWorkflow(wf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range rec.Steps {
		got[s.Name] = s.DependsOn
	}
	want := map[string][]string{"prep": nil, "step-1a": {"prep"}, "eval": {"prep", "step-1a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependsOn (-want +got):\n%s", diff)
	}
}

// A step whose outputs record says it was reused is cached in the record,
// with the run it came from and no attempt (its pod ran no program); one
// that ran is not.
func TestRecordCachedStep(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	model := []record.OutputRecord{{Name: "model", Type: "Model", URI: store.URI("wf-0/train/model"), Size: 3, SHA256: "ba7816bf"}}
	if err := recordstore.WriteStepOutputs(ctx, store, record.StepOutputs{Run: "wf-1", Step: "train", Outputs: model, CachedFrom: "wf-0"}); err != nil {
		t.Fatal(err)
	}
	if err := recordstore.WriteOutputs(ctx, store, "wf-1", "eval", nil); err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "wf-1", Status: record.StatusRunning, On: On, Steps: []record.StepRecord{{Name: "train"}, {Name: "eval"}}}
	node := func(id, name string) wfv1.NodeStatus {
		return wfv1.NodeStatus{ID: id, DisplayName: name, Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: wfv1.NodeSucceeded}
	}
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowSucceeded, Nodes: wfv1.Nodes{"n1": node("n1", "train"), "n2": node("n2", "eval")},
	}}
	if err := Record(ctx, store, rec, wf); err != nil {
		t.Fatal(err)
	}
	type cached struct {
		Name, From string
		Cached     bool
		Attempts   int
	}
	var got []cached
	for _, s := range rec.Steps {
		got = append(got, cached{s.Name, s.CachedFrom, s.Cached, s.Attempts})
	}
	want := []cached{{"train", "wf-0", true, 0}, {"eval", "", false, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(model, rec.Steps[0].Outputs); diff != "" {
		t.Errorf("the cached step's outputs (-want +got):\n%s", diff)
	}
}

// A distributed step's gang record (its launcher's) gives its record the
// gang attempts that did not succeed, numbered across the step's retries
// (a stalled attempt rank by rank), and the ranks' metrics series, which
// a later write replaces and a gang attempt's write keeps.
func TestRecordGangAttempts(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stalled := record.GangAttempt{Attempt: 1, Reason: record.ReasonStalled, Message: "stalled: no rank made progress for 10s", Restarted: true,
		Ranks: []record.RankState{{Rank: 0, Idle: "10s", LastProgress: &at, LastLine: "epoch 4"}, {Rank: 1, Idle: "11s", LastProgress: &at, LastLine: "epoch 3"}}}
	for i, a := range []record.GangAttempt{stalled, {Attempt: 1, Reason: record.ReasonFailed, Message: "rank 1 failed"}} {
		// The second is the first attempt of the step's retry: numbered after the first.
		got, err := recordstore.AddGangAttempt(ctx, store, "wf-1", "train", a, i)
		if err != nil || got.Attempt != i+1 {
			t.Fatalf("AddGangAttempt = %+v, %v; want attempt %d", got, err, i+1)
		}
	}
	step := func(n int64) *int64 { return &n }
	series := func(n int64) record.Progress {
		p := record.Progress{Updated: at, Step: step(n), Last: map[string]float64{"loss": 1 / float64(n)}, Lines: n}
		for k := int64(1); k <= n; k++ {
			p.Points = append(p.Points, record.MetricPoint{Time: at, Rank: int(k % 2), Attempt: 1, Step: step(k), Values: map[string]float64{"loss": 1 / float64(k)}})
		}
		return p
	}
	if err := recordstore.SetGangProgress(ctx, store, "wf-1", "train", series(3)); err != nil {
		t.Fatal(err)
	}
	if err := recordstore.SetGangProgress(ctx, store, "wf-1", "train", series(5)); err != nil {
		t.Fatal(err)
	}
	if _, err := recordstore.AddGangAttempt(ctx, store, "wf-1", "train", record.GangAttempt{Attempt: 1, Reason: record.ReasonFailed, Message: "rank 1 failed"}, 2); err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "wf-1", Status: record.StatusRunning, On: On, Steps: []record.StepRecord{{Name: "train"}, {Name: "eval"}}}
	node := func(id, name string, phase wfv1.NodePhase) wfv1.NodeStatus {
		return wfv1.NodeStatus{ID: id, DisplayName: name, Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: phase}
	}
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowFailed, Nodes: wfv1.Nodes{"n1": node("n1", "train", wfv1.NodeFailed), "n2": node("n2", "eval", wfv1.NodeSucceeded)},
	}}
	if err := Record(ctx, store, rec, wf); err != nil {
		t.Fatal(err)
	}
	second := record.GangAttempt{Attempt: 2, Reason: record.ReasonFailed, Message: "rank 1 failed"}
	third := record.GangAttempt{Attempt: 3, Reason: record.ReasonFailed, Message: "rank 1 failed"}
	if diff := cmp.Diff([]record.GangAttempt{stalled, second, third}, rec.Steps[0].GangAttempts); diff != "" {
		t.Errorf("train's gang attempts (-want +got):\n%s", diff)
	}
	if rec.Steps[1].GangAttempts != nil || rec.Steps[1].Progress != nil {
		t.Errorf("eval (no gang record) has gang attempts %+v, progress %+v", rec.Steps[1].GangAttempts, rec.Steps[1].Progress)
	}
	want := series(5)
	if diff := cmp.Diff(&want, rec.Steps[0].Progress); diff != "" {
		t.Errorf("train's progress (-want +got):\n%s", diff)
	}
	// Every gang attempt started the program: one launcher pod, three attempts.
	if a := rec.Steps[0].Attempts; a != 3 {
		t.Errorf("train's attempts %d, want its 3 gang attempts", a)
	}
	if a := rec.Steps[1].Attempts; a != 1 {
		t.Errorf("eval's attempts %d, want 1", a)
	}
}
