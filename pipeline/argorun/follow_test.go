package argorun

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

func TestExecutorLine(t *testing.T) {
	for line, want := range map[string]bool{
		`time="2026-11-30T12:12:05.753Z" level=info msg="sub-process exited" argo=true error="<nil>"`:                                             true,
		`time="2026-11-30T12:12:09.259Z" level=info msg="no need to save parameter - on overlapping volume: /pipectl/outputs/accuracy" argo=true`: true,
		`epoch 1/3 loss 0.3808 argo=true`: false,
		`time="x" level=info msg="mine"`:  false,
		`[rank 0] done in 0.75s`:          false,
		``:                                false,
	} {
		if got := ExecutorLine(line); got != want {
			t.Errorf("ExecutorLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// Following a workflow whose steps b and c already ended while a runs
// (as --attach does) prints b's and c's logs whole, in step order, before
// a's live lines; d, which failed before its container started, has no log
// and is not waited for.
func TestFollowReplaysEndedStepsFirst(t *testing.T) {
	const name = "wf-1"
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{}}}
	var pods []runtime.Object
	for _, step := range []struct {
		name  string
		phase wfv1.NodePhase
	}{{"a", wfv1.NodeRunning}, {"b", wfv1.NodeSucceeded}, {"c", wfv1.NodeFailed}, {"d", wfv1.NodeError}} {
		id := name + "-" + step.name
		wf.Status.Nodes[id] = wfv1.NodeStatus{ID: id, Name: name + "." + step.name, DisplayName: step.name, Type: wfv1.NodeTypePod, BoundaryID: name, Phase: step.phase}
		state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		podPhase := corev1.PodRunning
		switch step.phase {
		case wfv1.NodeRunning:
		case wfv1.NodeError: // the image could not be pulled
			podPhase, state = corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
		default:
			state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
		}
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: "ml", Labels: map[string]string{labelWorkflow: name}, Annotations: map[string]string{annotationNode: id}},
			Status:     corev1.PodStatus{Phase: podPhase, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: state}}},
		})
	}
	var logs strings.Builder
	f := &Follower{
		Clients: &Clients{Kube: kubefake.NewSimpleClientset(pods...), Workflows: wffake.NewSimpleClientset(wf), Namespace: "ml"},
		Name:    name, Steps: []string{"a", "b", "c", "d"}, Logs: &logs, Status: io.Discard, Poll: time.Millisecond,
	}
	f.init()
	start := time.Now()
	for range 2 { // a second event changes nothing
		if f.observe(t.Context(), wf) {
			t.Fatal("observe says a running workflow ended")
		}
	}
	f.wg.Wait()
	if d := time.Since(start); d > replayTimeout/2 {
		t.Errorf("observe waited %v for logs, as if for d's, which never started", d)
	}
	// The fake clientset serves every log as "fake logs".
	if want := "[b] fake logs\n[c] fake logs\n[a] fake logs\n"; logs.String() != want {
		t.Errorf("logs:\n%s\nwant:\n%s", logs.String(), want)
	}
}

// The follower shows a loop step's iterations at once, as the local output
// does: a line "STEP[0..n-1]  counts" when they change, and a line of its
// own for each failed iteration; on a terminal, a row under the step's.
func TestFollowLoopIterations(t *testing.T) {
	p, err := pipeline.Parse("pipeline.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: sweep}
steps:
  - name: trial
    loop: {items: [0.1, 0.03, 0.01], parallelism: 2}
    inputs: {lr: "{{item}}"}
    distributed: {nodes: 2}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      inputs: [{name: lr, type: float}]
      image: busybox
      command: [train, "{{inputs.lr}}"]
`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := argo.Compile(p, argo.Options{Image: "pipectl:test", Artifacts: "s3://b/runs"})
	if err != nil {
		t.Fatal(err)
	}
	wf.Name, wf.Namespace = "wf-1", "ml"
	loop := statusNode("tw", "trial", wfv1.NodeTypeDAG, wfv1.NodeRunning, 1, "")
	loop.TemplateName = "trial-loop"
	in := func(n wfv1.NodeStatus) wfv1.NodeStatus { n.BoundaryID = "tw"; return n }
	failed := in(statusNode("t1", "trial(1:0.03)", wfv1.NodeTypePod, wfv1.NodeFailed, 2, "1"))
	failed.Message = "exit code 1"
	wf.Status = wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{
		"tw": loop,
		"tg": in(statusNode("tg", "trial", wfv1.NodeTypeTaskGroup, wfv1.NodeRunning, 1, "")),
		"t0": in(statusNode("t0", "trial(0:0.1)", wfv1.NodeTypePod, wfv1.NodeSucceeded, 1, "0")),
		"t1": failed,
		"t2": in(statusNode("t2", "trial(2:0.01)", wfv1.NodeTypePod, wfv1.NodeRunning, 3, "")),
	}}
	// The ended iterations' launcher pods: their logs go under STEP[i].
	var pods []runtime.Object
	for _, id := range []string{"t0", "t1"} {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: "ml", Labels: map[string]string{labelWorkflow: wf.Name}, Annotations: map[string]string{annotationNode: id}},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}},
		})
	}
	for _, tty := range []bool{false, true} {
		var status, logs strings.Builder
		f := &Follower{
			Clients: &Clients{Kube: kubefake.NewSimpleClientset(pods...), Workflows: wffake.NewSimpleClientset(wf), Namespace: "ml"},
			Name:    wf.Name, Steps: []string{"trial"}, Logs: &logs, Status: &status, TTY: tty, Poll: time.Millisecond,
		}
		f.init()
		ctx, cancel := context.WithCancel(t.Context())
		for range 2 { // a second event changes nothing
			f.observe(ctx, wf)
		}
		cancel() // trial[2]'s pod never starts
		f.wg.Wait()
		// The fake clientset serves every log as "fake logs".
		if want := "[trial[0]] fake logs\n[trial[1]] fake logs\n"; logs.String() != want {
			t.Errorf("tty %v: logs:\n%s\nwant:\n%s", tty, logs.String(), want)
		}
		want := "trial Running\ntrial[0..2]  1 succeeded, 1 failed, 1 running\ntrial[1] Failed: exit code 1\n"
		if tty {
			want = "      trial[0..2]  1 succeeded, 1 failed, 1 running\n"
		}
		if !strings.Contains(status.String(), want) || (!tty && status.String() != want) {
			t.Errorf("tty %v: status:\n%s\nwant (in it):\n%s", tty, status.String(), want)
		}
	}
}

// Follow waits out an API server that refuses connections (a restart) and
// follows the workflow to its end; one away for longer than Outage, or an
// answer that is an error, ends Follow with that error.
func TestFollowWaitsForTheAPIServer(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis/argoproj.io/v1alpha1/namespaces/ml/workflows/wf-1",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "workflows"}, "wf-1", errors.New("no"))
	for _, tt := range []struct {
		name    string
		fail    []error // the answers to the first Gets
		outage  time.Duration
		wantErr string // "" for the workflow followed to its end
	}{
		{name: "restart", fail: []error{refused, refused, refused}, outage: time.Minute},
		{name: "away too long", fail: slices.Repeat([]error{refused}, 1000), outage: 20 * time.Millisecond, wantErr: "the API server did not answer for 20ms"},
		{name: "an answer", fail: []error{forbidden}, outage: time.Minute, wantErr: "forbidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Namespace: "ml"}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowSucceeded}}
			wfs := wffake.NewSimpleClientset(wf)
			gets := 0
			wfs.PrependReactor("get", "workflows", func(k8stesting.Action) (bool, runtime.Object, error) {
				gets++
				if gets <= len(tt.fail) {
					return true, nil, tt.fail[gets-1]
				}
				return false, nil, nil
			})
			f := &Follower{
				Clients: &Clients{Kube: kubefake.NewSimpleClientset(), Workflows: wfs, Namespace: "ml"},
				Name:    "wf-1", Logs: io.Discard, Status: io.Discard, Poll: time.Millisecond, Outage: tt.outage,
			}
			got, err := f.Follow(t.Context())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Follow: %v", err)
			case tt.wantErr == "" && (got == nil || got.Status.Phase != wfv1.WorkflowSucceeded):
				t.Errorf("Follow returned %v, want the succeeded workflow", got)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Follow error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}
