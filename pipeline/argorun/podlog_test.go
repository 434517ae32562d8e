package argorun

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"pipectl.dev/pipectl/components/record"
)

// PodLog reads the log of a step whose pod's container started; a step
// without a pod, or whose container has not started, has none yet.
func TestPodLog(t *testing.T) {
	const name = "wf-1"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{}}}
	pods := kubefake.NewSimpleClientset()
	for _, step := range []struct {
		name    string
		started bool
	}{{"running", true}, {"waiting", false}} {
		id := name + "-" + step.name
		wf.Status.Nodes[id] = wfv1.NodeStatus{ID: id, Name: name + "." + step.name, DisplayName: step.name, Type: wfv1.NodeTypePod, BoundaryID: name, Phase: wfv1.NodeRunning}
		state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		if step.started {
			state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: "ml", Labels: map[string]string{labelWorkflow: name}, Annotations: map[string]string{annotationNode: id}},
			Status:     corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: state}}},
		}
		if _, err := pods.CoreV1().Pods("ml").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := func() (*Clients, error) {
		return &Clients{Kube: pods, Workflows: wffake.NewSimpleClientset(wf), Namespace: "default"}, nil
	}
	onArgo := &record.Run{ID: name, On: On, Namespace: "ml", Status: record.StatusRunning}
	for _, tc := range []struct {
		desc   string
		rec    *record.Run
		step   string
		want   string
		wantOK bool
	}{
		// The fake clientset serves every log as "fake logs".
		{"a started container", onArgo, "running", "fake logs", true},
		{"a container not started", onArgo, "waiting", "", false},
		{"a step without a pod yet", onArgo, "later", "", false},
		{"a local run", &record.Run{ID: name, On: "local", Status: record.StatusRunning}, "running", "", false},
	} {
		got, ok, err := PodLog(t.Context(), f, tc.rec, tc.step, 1<<20)
		if err != nil || string(got) != tc.want || ok != tc.wantOK {
			t.Errorf("%s: PodLog = %q, %v, %v; want %q, %v, nil", tc.desc, got, ok, err, tc.want, tc.wantOK)
		}
	}
	// A run whose workflow is gone: an error that says so.
	if _, _, err := PodLog(t.Context(), f, &record.Run{ID: "wf-2", On: On, Namespace: "ml"}, "running", 1<<20); err == nil {
		t.Error("PodLog of a run without a workflow: no error")
	}
}
