package argo

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
)

func statusNode(id, task string, typ wfv1.NodeType, phase wfv1.NodePhase, start int, exit string) wfv1.NodeStatus {
	n := wfv1.NodeStatus{ID: id, DisplayName: task, Type: typ, BoundaryID: "wf-1", Phase: phase,
		StartedAt: metav1.NewTime(time.Unix(int64(start), 0))}
	if exit != "" {
		n.Outputs = &wfv1.Outputs{ExitCode: &exit}
		n.FinishedAt = metav1.NewTime(time.Unix(int64(start+1), 0))
	}
	return n
}

func TestUpdateRecord(t *testing.T) {
	at := func(s int) *time.Time { v := time.Unix(int64(s), 0); return &v }
	code := func(c int) *int { return &c }
	str := func(s string) *string { return &s }
	pod := statusNode("p1", "make", wfv1.NodeTypePod, wfv1.NodeSucceeded, 10, "0")
	pod.Outputs.Parameters = []wfv1.Parameter{{Name: "n", Value: wfv1.AnyStringPtr(components.EncodeValue("{{x}}"))}}
	retry := statusNode("r1", "step-1st", wfv1.NodeTypeRetry, wfv1.NodeFailed, 20, "")
	retry.Message = "No more retries left"
	retry.Children = []string{"a1", "a2"}
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "wf-1"},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed, StartedAt: metav1.NewTime(time.Unix(5, 0)), FinishedAt: metav1.NewTime(time.Unix(40, 0)),
			Message: "child failed",
			Nodes: wfv1.Nodes{
				"wf-1": {ID: "wf-1", DisplayName: "wf-1", Type: wfv1.NodeTypeDAG, Phase: wfv1.NodeFailed},
				"p1":   pod,
				"r1":   retry,
				"a1":   statusNode("a1", "step-1st(0)", wfv1.NodeTypePod, wfv1.NodeFailed, 20, "2"),
				"a2":   statusNode("a2", "step-1st(1)", wfv1.NodeTypePod, wfv1.NodeFailed, 25, "3"),
			}},
	}
	rec := &artifacts.Run{ID: "wf-1", Status: artifacts.StatusRunning, Steps: []artifacts.StepRecord{
		{Name: "make", Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}},
		{Name: "1st", Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}},
		{Name: "never", Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}},
	}}
	UpdateRecord(rec, wf)
	want := &artifacts.Run{ID: "wf-1", Status: artifacts.StatusFailed, On: "argo", Started: time.Unix(5, 0), Finished: at(40), Message: "child failed",
		Steps: []artifacts.StepRecord{
			{Name: "make", Status: artifacts.StatusSucceeded, ExitCode: code(0), Attempts: 1, Started: at(10), Finished: at(11),
				Outputs: []artifacts.OutputRecord{{Name: "n", Type: "string", Value: str("{{x}}")}}},
			{Name: "1st", Status: artifacts.StatusFailed, ExitCode: code(3), Attempts: 2, Started: at(20), Message: "No more retries left",
				Outputs: []artifacts.OutputRecord{}},
			{Name: "never", Status: artifacts.StatusSkipped, Outputs: []artifacts.OutputRecord{}},
		}}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("UpdateRecord (-want +got):\n%s", diff)
	}

	wf.Spec.Shutdown = wfv1.ShutdownStrategyStop
	if got := RunStatus(wf); got != artifacts.StatusCancelled {
		t.Errorf("RunStatus of a stopped workflow = %s, want Cancelled", got)
	}
}
