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
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

// A detached run's record is completed by the first reader that finds its
// workflow ended, with the artifact outputs found in the store.
func TestRefreshWritesTheFinalRecord(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &artifacts.Run{ID: "wf-1", Pipeline: "p", Status: artifacts.StatusRunning, On: On, Started: time.Unix(1, 0),
		Steps: []artifacts.StepRecord{{Name: "make", Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}}}}
	if err := artifacts.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "wf-1/make/data", strings.NewReader("abc"), 3); err != nil {
		t.Fatal(err)
	}
	if err := artifacts.WriteMetadata(ctx, store, "wf-1/make/data", artifacts.Metadata{Type: "Dataset", Kind: artifacts.KindFile, Size: 3, SHA256: "ba7816bf"}); err != nil {
		t.Fatal(err)
	}
	exit := "0"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowSucceeded, FinishedAt: metav1.NewTime(time.Unix(9, 0)),
		Nodes: wfv1.Nodes{"n1": {ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{ExitCode: &exit}}},
	}}
	f := &cmdutil.Factory{KubeClientsFunc: func() (*cmdutil.KubeClients, error) {
		return &cmdutil.KubeClients{Workflows: wffake.NewSimpleClientset(wf), Namespace: "ml"}, nil
	}}
	got := Refresh(ctx, f, store, rec)
	if got.Status != artifacts.StatusSucceeded || len(got.Steps[0].Outputs) != 1 || got.Steps[0].Outputs[0].Size != 3 {
		t.Fatalf("refreshed record: %+v", got)
	}
	stored, err := artifacts.ReadRun(ctx, store, "wf-1")
	if err != nil || stored.Status != artifacts.StatusSucceeded {
		t.Errorf("stored record: %+v, %v", stored, err)
	}
	if rec.Status != artifacts.StatusRunning {
		t.Errorf("Refresh changed its argument")
	}

	// No cluster: the record as stored.
	f = &cmdutil.Factory{KubeClientsFunc: func() (*cmdutil.KubeClients, error) { return nil, errors.New("no kubeconfig") }}
	if got := Refresh(ctx, f, store, rec); got != rec {
		t.Errorf("Refresh without a cluster changed the record")
	}
}
