package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

const twoSteps = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: words}
steps:
  - name: make
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: make}
      image: busybox
      outputs: [{name: n, type: int}]
      command: [sh, -c, 'echo 3 > "$0"', "{{outputs.n.path}}"]
  - name: count
    after: [make]
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: count}
      image: busybox
      command: [echo, counted]
`

// fakeCluster is a fake API whose "controller" is the test: it names
// created workflows like the API server does for generateName.
func fakeCluster(t *testing.T) (*argorun.Clients, *wffake.Clientset, *kubefake.Clientset) {
	t.Helper()
	wc := wffake.NewSimpleClientset()
	wc.PrependReactor("create", "workflows", func(a k8stesting.Action) (bool, runtime.Object, error) {
		wf := a.(k8stesting.CreateAction).GetObject().(*wfv1.Workflow)
		if wf.Name == "" {
			wf.Name = wf.GenerateName + "abcde"
		}
		wf.CreationTimestamp = metav1.Now()
		return false, nil, nil
	})
	kc := kubefake.NewSimpleClientset()
	return &argorun.Clients{Kube: kc, Workflows: wc, Namespace: "ml"}, wc, kc
}

func node(wf, task, id string, phase wfv1.NodePhase, exit string, msg string) wfv1.NodeStatus {
	n := wfv1.NodeStatus{ID: id, Name: wf + "." + task, DisplayName: task, Type: wfv1.NodeTypePod, BoundaryID: wf, Phase: phase, Message: msg,
		StartedAt: metav1.Now()}
	if exit != "" {
		n.Outputs = &wfv1.Outputs{ExitCode: &exit}
		n.FinishedAt = metav1.Now()
	}
	return n
}

// progress plays the controller: it moves the workflow through the given
// node sets, one per tick, creating each node's pod.
func progress(t *testing.T, wc *wffake.Clientset, kc *kubefake.Clientset, final wfv1.WorkflowPhase, stages ...[]wfv1.NodeStatus) {
	ctx := context.Background()
	api := wc.ArgoprojV1alpha1().Workflows("ml")
	var name string
	for name == "" {
		l, err := api.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		if len(l.Items) > 0 {
			name = l.Items[0].Name
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for i, stage := range stages {
		time.Sleep(50 * time.Millisecond)
		wf, err := api.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		wf.Status.Phase = wfv1.WorkflowRunning
		if wf.Status.Nodes == nil {
			wf.Status.Nodes = wfv1.Nodes{}
		}
		for _, n := range stage {
			wf.Status.Nodes[n.ID] = n
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n.ID, Namespace: "ml",
				Labels:      map[string]string{"workflows.argoproj.io/workflow": name},
				Annotations: map[string]string{"workflows.argoproj.io/node-id": n.ID}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
			_, _ = kc.CoreV1().Pods("ml").Create(ctx, pod, metav1.CreateOptions{})
		}
		if i == len(stages)-1 {
			wf.Status.Phase = final
			wf.Status.FinishedAt = metav1.Now()
		}
		if _, err := api.Update(ctx, wf, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
			return
		}
	}
}

func argoOpts(t *testing.T, kcs *argorun.Clients) (*Options, string, *strings.Builder, *strings.Builder) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(twoSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := podutil.Test()
	store := filepath.Join(dir, "store")
	f := &cmdutil.Factory{IOStreams: ios, ArtifactsRoot: store, KubeClientsFunc: func() (*argorun.Clients, error) { return kcs, nil }}
	var o, e strings.Builder
	ios.Out, ios.ErrOut = &o, &e
	return &Options{IO: ios, Factory: f, File: file, On: "argo", Argo: ArgoOptions{Pods: argo.Options{Image: "pipectl:test", AllowNonS3: true}, Poll: 20 * time.Millisecond, Images: cmdutil.ImageFlags{KeepTags: true}}}, store, &o, &e
}

func readRecord(t *testing.T, store string) *record.Run {
	t.Helper()
	s, err := artifacts.NewLocal(store)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := recordstore.ListRuns(context.Background(), s, nil)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs in the store: %v, %v", runs, err)
	}
	return runs[0]
}

func TestArgoRunSucceeded(t *testing.T) {
	kcs, wc, kc := fakeCluster(t)
	opts, store, out, errOut := argoOpts(t, kcs)
	wf := "words-abcde"
	n := "3"
	made := node(wf, "make", "make-1", wfv1.NodeSucceeded, "0", "")
	made.Outputs.Parameters = []wfv1.Parameter{{Name: "n", Value: wfv1.AnyStringPtr(n)}}
	// What make's pod (pipectl exec) publishes with its outputs.
	s, err := artifacts.NewLocal(store)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordstore.WriteOutputs(context.Background(), s, wf, "make", []record.OutputRecord{{Name: "n", Type: "int", Value: &n}}); err != nil {
		t.Fatal(err)
	}
	go progress(t, wc, kc, wfv1.WorkflowSucceeded,
		[]wfv1.NodeStatus{node(wf, "make", "make-1", wfv1.NodeRunning, "", "")},
		[]wfv1.NodeStatus{made, node(wf, "count", "count-1", wfv1.NodeRunning, "", "")},
		[]wfv1.NodeStatus{node(wf, "count", "count-1", wfv1.NodeSucceeded, "0", "")},
	)
	if err := argoRun(opts); err != nil {
		t.Fatalf("argoRun: %v\nstderr:\n%s", err, errOut)
	}
	for _, want := range []string{"Submitted workflow words-abcde in namespace ml", "make Running", "make Succeeded", "count Succeeded", "Run words-abcde Succeeded", "n = 3"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// The fake API server's pod log is "fake logs".
	for _, want := range []string{"[make] fake logs", "[count] fake logs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	rec := readRecord(t, store)
	if rec.Status != record.StatusSucceeded || rec.On != "argo" || rec.Finished == nil {
		b, _ := json.MarshalIndent(rec, "", "  ")
		t.Errorf("record:\n%s", b)
	}
	if s := rec.Step("make"); s == nil || s.ExitCode == nil || *s.ExitCode != 0 || len(s.Outputs) != 1 || *s.Outputs[0].Value != "3" || s.Outputs[0].Type != "int" {
		t.Errorf("make's record: %+v", s)
	}
	// Logs the follower streamed are kept for steps without a step.log.
	if b, err := os.ReadFile(filepath.Join(store, wf, "count", "step.log")); err != nil || string(b) != "fake logs\n" {
		t.Errorf("count's step.log = %q, %v", b, err)
	}
	got, err := wc.ArgoprojV1alpha1().Workflows("ml").Get(context.Background(), wf, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Templates[0].DAG == nil || len(got.Spec.Templates[0].DAG.Tasks) != 2 {
		t.Errorf("submitted workflow's DAG: %+v", got.Spec.Templates[0])
	}
}

func TestArgoRunFailed(t *testing.T) {
	kcs, wc, kc := fakeCluster(t)
	opts, store, _, errOut := argoOpts(t, kcs)
	wf := "words-abcde"
	go progress(t, wc, kc, wfv1.WorkflowFailed,
		[]wfv1.NodeStatus{node(wf, "make", "make-1", wfv1.NodeFailed, "3", "Error (exit code 3)")},
	)
	err := argoRun(opts)
	if podutil.Code(err) != 1 {
		t.Fatalf("argoRun = %v (code %d), want exit code 1\n%s", err, podutil.Code(err), errOut)
	}
	for _, want := range []string{"make Failed: Error (exit code 3)", "Run words-abcde Failed", "make Failed (exit 3)"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	rec := readRecord(t, store)
	if rec.Status != record.StatusFailed || rec.Step("count").Status != record.StatusSkipped {
		t.Errorf("record: %+v", rec)
	}
}

func TestArgoRunInterruptedLeavesItRunning(t *testing.T) {
	kcs, _, _ := fakeCluster(t)
	opts, store, _, errOut := argoOpts(t, kcs)
	sigs := make(chan os.Signal, 1)
	opts.Argo.Signals = sigs
	go func() { time.Sleep(200 * time.Millisecond); sigs <- os.Interrupt }()
	err := argoRun(opts)
	if podutil.Code(err) != podutil.ExitCancelled {
		t.Fatalf("argoRun = %v, want exit code 130", err)
	}
	if !strings.Contains(errOut.String(), "pipectl run --on argo --attach words-abcde -n ") {
		t.Errorf("stderr does not say how to follow again:\n%s", errOut)
	}
	if rec := readRecord(t, store); rec.Status != record.StatusRunning {
		t.Errorf("record status %s, want Running", rec.Status)
	}
}

// failWhenStopped answers a patch of the workflow (spec.shutdown) as the
// controller does: 50 ms later the workflow fails, with message. The fake
// clientset's watch ignores resourceVersion, so an update made between the
// follower's Get and its Watch would be lost (a real API server replays
// it): the failed workflow is updated again every 50 ms for 10 s, so that a
// watch started late still sees it.
func failWhenStopped(wc *wffake.Clientset, message string) {
	wc.PrependReactor("patch", "workflows", func(a k8stesting.Action) (bool, runtime.Object, error) {
		go func() {
			api := wc.ArgoprojV1alpha1().Workflows("ml")
			for range 200 {
				time.Sleep(50 * time.Millisecond)
				wf, err := api.Get(context.Background(), "words-abcde", metav1.GetOptions{})
				if err != nil {
					return
				}
				wf.Status.Phase = wfv1.WorkflowFailed
				wf.Status.Message = message
				_, _ = api.Update(context.Background(), wf, metav1.UpdateOptions{})
			}
		}()
		return false, nil, nil
	})
}

func TestArgoRunStopOnExit(t *testing.T) {
	kcs, wc, _ := fakeCluster(t)
	opts, store, _, errOut := argoOpts(t, kcs)
	opts.Argo.StopOnExit = true
	sigs := make(chan os.Signal, 1)
	opts.Argo.Signals = sigs
	failWhenStopped(wc, "Stopped with strategy 'Stop'")
	go func() { time.Sleep(200 * time.Millisecond); sigs <- os.Interrupt }()
	err := argoRun(opts)
	if podutil.Code(err) != podutil.ExitCancelled {
		t.Fatalf("argoRun = %v, want exit code 130\n%s", err, errOut)
	}
	if rec := readRecord(t, store); rec.Status != record.StatusCancelled {
		t.Errorf("record status %s, want Cancelled\n%s", rec.Status, errOut)
	}
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"p.yaml"}, true},
		{[]string{"p.yaml", "--on", "argo", "-n", "ml", "--image", "pipectl:1", "--s3-secret", "s"}, true},
		{[]string{"--on", "argo", "--attach", "words-x"}, true},
		{[]string{"--on", "argo"}, false},
		{[]string{"p.yaml", "--on", "argo", "--attach", "w"}, false},
		{[]string{"--attach", "w"}, false},
		{[]string{"p.yaml", "--on", "mars"}, false},
		{[]string{"p.yaml", "--parallelism", "-1"}, false},
		{[]string{"p.yaml", "--parallelism", "0"}, true},
	} {
		ios, _, _, _ := podutil.Test()
		f := &cmdutil.Factory{IOStreams: ios}
		var got *Options
		cmd := NewCmdRun(f, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		err := cmd.Execute()
		if (err == nil) != tc.ok {
			t.Errorf("%v: err = %v, want ok=%v", tc.args, err, tc.ok)
		}
		if tc.ok && got == nil {
			t.Errorf("%v: run function not called", tc.args)
		}
	}
}

// On a terminal: a live table (redrawn in place) and, on Ctrl-C, a question.
func TestArgoRunTTY(t *testing.T) {
	kcs, wc, _ := fakeCluster(t)
	opts, store, _, errOut := argoOpts(t, kcs)
	opts.IO.ErrTTY, opts.IO.InTTY = true, true
	opts.IO.In = strings.NewReader("y\n")
	sigs := make(chan os.Signal, 1)
	opts.Argo.Signals = sigs
	failWhenStopped(wc, "")
	go func() { time.Sleep(200 * time.Millisecond); sigs <- os.Interrupt }()
	err := argoRun(opts)
	if podutil.Code(err) != podutil.ExitCancelled {
		t.Fatalf("argoRun = %v, want exit code 130\n%s", err, errOut)
	}
	for _, want := range []string{"○ make", "Run words-abcde (", "Stop workflow words-abcde? [y/N]", "Stopping workflow words-abcde"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%q", want, errOut)
		}
	}
	if rec := readRecord(t, store); rec.Status != record.StatusCancelled {
		t.Errorf("record status %s, want Cancelled", rec.Status)
	}
}

// --attach follows a workflow already submitted.
func TestArgoRunAttach(t *testing.T) {
	kcs, wc, kc := fakeCluster(t)
	opts, _, _, errOut := argoOpts(t, kcs)
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "words-abcde", Namespace: "ml", Labels: map[string]string{"pipectl.dev/pipeline": "words"}},
		Spec: wfv1.WorkflowSpec{Templates: []wfv1.Template{{Name: "main", DAG: &wfv1.DAGTemplate{Tasks: []wfv1.DAGTask{{Name: "make"}}}}}}}
	if _, err := wc.ArgoprojV1alpha1().Workflows("ml").Create(context.Background(), wf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.File, opts.Argo.Attach = "", "words-abcde"
	go progress(t, wc, kc, wfv1.WorkflowSucceeded, []wfv1.NodeStatus{node("words-abcde", "make", "make-1", wfv1.NodeSucceeded, "0", "")})
	if err := argoRun(opts); err != nil {
		t.Fatalf("argoRun: %v\n%s", err, errOut)
	}
	for _, want := range []string{"Following workflow words-abcde", "make Succeeded", "Run words-abcde Succeeded"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// --attach latest follows the newest run of the store, in the namespace its
// record names when -n is not given.
func TestArgoRunAttachLatest(t *testing.T) {
	kcs, wc, kc := fakeCluster(t)
	opts, store, _, errOut := argoOpts(t, kcs)
	opts.File, opts.Argo.Attach = "", "latest"
	if err := argoRun(opts); err == nil || !strings.Contains(err.Error(), "no runs in") {
		t.Fatalf("--attach latest with no runs: %v", err)
	}

	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "words-abcde", Namespace: "ml", Labels: map[string]string{"pipectl.dev/pipeline": "words"}},
		Spec: wfv1.WorkflowSpec{Templates: []wfv1.Template{{Name: "main", DAG: &wfv1.DAGTemplate{Tasks: []wfv1.DAGTask{{Name: "make"}}}}}}}
	if _, err := wc.ArgoprojV1alpha1().Workflows("ml").Create(context.Background(), wf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := artifacts.NewLocal(store)
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "words-abcde", Pipeline: "words", Status: record.StatusRunning, On: "argo", Namespace: "ml", Started: time.Now(),
		Steps: []record.StepRecord{{Name: "make", Status: record.StatusPending, Outputs: []record.OutputRecord{}}}}
	if err := recordstore.WriteRun(context.Background(), s, rec); err != nil {
		t.Fatal(err)
	}
	go progress(t, wc, kc, wfv1.WorkflowSucceeded, []wfv1.NodeStatus{node("words-abcde", "make", "make-1", wfv1.NodeSucceeded, "0", "")})
	if err := argoRun(opts); err != nil {
		t.Fatalf("argoRun: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut.String(), "Run words-abcde Succeeded") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if ns := opts.Factory.Kube.Namespace; ns != "ml" {
		t.Errorf("namespace in effect %q, want the record's, ml", ns)
	}
	if got := readRecord(t, store); got.Status != record.StatusSucceeded {
		t.Errorf("record status %s, want Succeeded", got.Status)
	}
}
