package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runstore"
)

// The UI reads cluster runs as `pipectl runs` does: a record still Running
// is refreshed from its workflow, and a cluster that cannot be reached is
// noted once however often the pages ask.
func TestRecordsRefreshClusterRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "wf-1", Pipeline: "p", Status: record.StatusRunning, On: argorun.On, Namespace: "ml", Started: time.Unix(1, 0),
		Steps: []record.StepRecord{{Name: "make", Status: record.StatusRunning, Outputs: []record.OutputRecord{}}}}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowFailed, FinishedAt: metav1.NewTime(time.Unix(9, 0))}}
	f := &cmdutil.Factory{ArtifactsRoot: dir, KubeClientsFunc: func() (*argorun.Clients, error) {
		return &argorun.Clients{Workflows: wffake.NewSimpleClientset(wf), Namespace: "default"}, nil
	}}
	var warn strings.Builder
	note := &sameOnce{w: &warn}
	r := runstore.New(f.Clients, store, note)
	got, err := r.Get(ctx, "wf-1")
	if err != nil || got.Status != record.StatusFailed {
		t.Fatalf("Get = %+v, %v; want the workflow's Failed", got, err)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 1 || list[0].Status != record.StatusFailed {
		t.Fatalf("List = %v, %v", list, err)
	}

	// No cluster: the stored record, and one note for many reads.
	rec.ID = "wf-2"
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	r = runstore.New(func() (*argorun.Clients, error) { return nil, errNoCluster }, store, note)
	for range 5 {
		if got, err := r.Get(ctx, "wf-2"); err != nil || got.Status != record.StatusRunning {
			t.Fatalf("Get without a cluster = %+v, %v", got, err)
		}
	}
	if n := strings.Count(warn.String(), "no kubeconfig here"); n != 1 {
		t.Errorf("the note was given %d times:\n%s", n, warn.String())
	}
}

type clusterError string

func (e clusterError) Error() string { return string(e) }

const errNoCluster = clusterError("no kubeconfig here")
