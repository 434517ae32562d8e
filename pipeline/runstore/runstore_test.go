package runstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

func running(id, ns string, started int64) *record.Run {
	return &record.Run{ID: id, Pipeline: "p", Status: record.StatusRunning, On: argorun.On, Namespace: ns, Started: time.Unix(started, 0),
		Steps: []record.StepRecord{{Name: "make", Status: record.StatusPending, Outputs: []record.OutputRecord{}}}}
}

// testReader is a Reader of a local store holding runs, on a fake cluster
// with the workflows wfs (namespace "default" in effect).
func testReader(t *testing.T, runs []*record.Run, wfs ...*wfv1.Workflow) (*Reader, *strings.Builder) {
	t.Helper()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := recordstore.WriteRun(t.Context(), store, r); err != nil {
			t.Fatal(err)
		}
	}
	objs := make([]runtime.Object, len(wfs))
	for i, wf := range wfs {
		objs[i] = wf
	}
	f := func() (*argorun.Clients, error) {
		return &argorun.Clients{Workflows: wffake.NewSimpleClientset(objs...), Namespace: "default"}, nil
	}
	warn := &strings.Builder{}
	return New(f, store, warn), warn
}

// A run is looked up in the namespace its record names, whatever the
// namespace in effect; runs that cannot be refreshed are reported once.
func TestList(t *testing.T) {
	done := &record.Run{ID: "local-1", Status: record.StatusSucceeded, Started: time.Unix(3, 0), Steps: []record.StepRecord{}}
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-ml", Namespace: "ml"}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed}}
	r, warn := testReader(t, []*record.Run{running("wf-ml", "ml", 4), done, running("wf-gone", "ml", 2), running("wf-other", "team-b", 1)}, wf)
	runs, err := r.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, run := range runs {
		got = append(got, run.ID+" "+run.Status)
	}
	want := []string{"wf-ml Failed", "local-1 Succeeded", "wf-gone Running", "wf-other Running"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if w := warn.String(); !strings.Contains(w, "2 running cluster runs show their last recorded status") ||
		!strings.Contains(w, "workflow wf-gone not found in namespace ml") || strings.Count(w, "\n") != 1 {
		t.Errorf("warning = %q", w)
	}
}

// Get resolves "latest", refreshes a running cluster run (writing its final
// record back once its workflow ended), and says when a run is missing.
func TestGet(t *testing.T) {
	ctx := t.Context()
	exit := "0"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowSucceeded, FinishedAt: metav1.NewTime(time.Unix(9, 0)),
		Nodes: wfv1.Nodes{"n1": {ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{ExitCode: &exit}}},
	}}
	old := &record.Run{ID: "local-1", Status: record.StatusSucceeded, Started: time.Unix(1, 0), Steps: []record.StepRecord{}}
	r, warn := testReader(t, []*record.Run{old, running("wf-1", "ml", 5)}, wf)
	if err := recordstore.WriteOutputs(ctx, r.Store(), "wf-1", "make", []record.OutputRecord{{Name: "data", Type: "Dataset", URI: "s3://b/wf-1/make/data", Size: 3}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, Latest)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "wf-1" || got.Status != record.StatusSucceeded || len(got.Steps[0].Outputs) != 1 || warn.Len() != 0 {
		t.Errorf("Get(latest) = %+v (warnings %q), want wf-1 refreshed: Succeeded with its output", got, warn)
	}
	if stored, err := Stored(ctx, r.Store(), "wf-1", nil); err != nil || stored.Status != record.StatusSucceeded {
		t.Errorf("stored record after Get: %+v, %v; want the final record written back", stored, err)
	}
	if ref, err := r.ExpandLatest(ctx, "latest/make/data"); err != nil || ref != "wf-1/make/data" {
		t.Errorf("ExpandLatest = %q, %v", ref, err)
	}
	if _, err := r.Get(ctx, "nope"); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("Get(nope) = %v, want ErrNotFound", err)
	}
	empty, _ := testReader(t, nil)
	if _, err := empty.Get(context.Background(), Latest); !errors.Is(err, artifacts.ErrNotFound) || !strings.Contains(err.Error(), "no runs in") {
		t.Errorf("Get(latest) of an empty store = %v, want ErrNotFound", err)
	}
}
