package artifacts

import (
	"encoding/json"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// `artifacts ls` on a cluster run that was detached and has since finished
// lists its outputs: it reads the record through the reader that refreshes
// running cluster runs (issue 11 item 4: it showed nothing).
func TestListRefreshesADetachedRun(t *testing.T) {
	ctx := t.Context()
	ios, _, out, _ := podutil.Test()
	dir := t.TempDir()
	exit := "0"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{
		Phase: wfv1.WorkflowSucceeded, FinishedAt: metav1.NewTime(time.Unix(9, 0)),
		Nodes: wfv1.Nodes{"n1": {ID: "n1", DisplayName: "make", Type: wfv1.NodeTypePod, BoundaryID: "wf-1", Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{ExitCode: &exit}}},
	}}
	f := &cmdutil.Factory{IOStreams: ios, ArtifactsRoot: dir, Getenv: func(string) string { return "" },
		KubeClientsFunc: func() (*argorun.Clients, error) {
			return &argorun.Clients{Workflows: wffake.NewSimpleClientset(wf), Namespace: "default"}, nil
		}}
	store, err := f.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What `pipectl run --on argo` wrote before it was detached.
	rec := &record.Run{ID: "wf-1", Pipeline: "p", Status: record.StatusRunning, On: argorun.On, Namespace: "ml", Started: time.Unix(1, 0),
		Steps: []record.StepRecord{{Name: "make", Status: record.StatusPending, Outputs: []record.OutputRecord{}}}}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	// What the step's pod published.
	data := record.OutputRecord{Name: "data", Type: "Dataset", URI: store.URI("wf-1/make/data"), Size: 3, SHA256: "ba7816bf"}
	if err := recordstore.WriteOutputs(ctx, store, "wf-1", "make", []record.OutputRecord{data}); err != nil {
		t.Fatal(err)
	}

	cmd := NewCmdList(f, nil)
	cmd.SetArgs([]string{"wf-1", "-o", "json"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	var got []runview.Entry
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []runview.Entry{{Step: "make", Output: "data", Type: "Dataset", URI: data.URI, Size: 3, SHA256: "ba7816bf"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("artifacts ls -o json (-want +got):\n%s", diff)
	}
}
