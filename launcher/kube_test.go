package launcher

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetfake "sigs.k8s.io/jobset/client-go/clientset/versioned/fake"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline/plan"
)

// fakeCluster is a fake API server whose watches the test drives.
type fakeCluster struct {
	kube      *kubefake.Clientset
	jobsets   *jobsetfake.Clientset
	jsWatches chan *watch.FakeWatcher
	podWatch  chan *watch.FakeWatcher
	out, errs componentstest.Buffer
	mu        sync.Mutex
	deletes   []metav1.DeletionPropagation
}

func newFakeCluster(t testing.TB, objs ...runtime.Object) *fakeCluster {
	t.Helper()
	f := &fakeCluster{
		kube: kubefake.NewClientset(objs...), jobsets: jobsetfake.NewSimpleClientset(),
		jsWatches: make(chan *watch.FakeWatcher, 10), podWatch: make(chan *watch.FakeWatcher, 10),
	}
	f.jobsets.PrependWatchReactor("jobsets", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(10, false)
		f.jsWatches <- w
		return true, w, nil
	})
	f.kube.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(10, false)
		f.podWatch <- w
		return true, w, nil
	})
	// Deleting the JobSet deletes its pods (the garbage collector's work).
	f.jobsets.PrependReactor("delete", "jobsets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		f.mu.Lock()
		if p := d.GetDeleteOptions().PropagationPolicy; p != nil {
			f.deletes = append(f.deletes, *p)
		}
		f.mu.Unlock()
		pods, _ := f.kube.CoreV1().Pods(d.GetNamespace()).List(context.Background(), metav1.ListOptions{})
		for _, p := range pods.Items {
			_ = f.kube.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, p.Namespace, p.Name)
		}
		return false, nil, nil
	})
	return f
}

func (f *fakeCluster) launcher() *Launcher {
	return &Launcher{
		Clients: Clients{Kube: f.kube, JobSets: f.jobsets},
		Logs:    fakeLogs{}, Out: &f.out, ErrOut: &f.errs,
		RetryInterval: 10 * time.Millisecond, CleanupTimeout: 5 * time.Second,
	}
}

func (f *fakeCluster) nextJSWatch(t testing.TB) *watch.FakeWatcher {
	t.Helper()
	return nextWatch(t, f.jsWatches, "JobSet")
}

func (f *fakeCluster) nextPodWatch(t testing.TB) *watch.FakeWatcher {
	t.Helper()
	return nextWatch(t, f.podWatch, "pod")
}

// nextWatch waits up to 5 s for the launcher to open a watch of what.
func nextWatch(t testing.TB, watches <-chan *watch.FakeWatcher, what string) *watch.FakeWatcher {
	t.Helper()
	select {
	case w := <-watches:
		return w
	case <-time.After(5 * time.Second):
		t.Fatalf("the launcher opened no %s watch", what)
		return nil
	}
}

func (f *fakeCluster) deletions() []metav1.DeletionPropagation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]metav1.DeletionPropagation(nil), f.deletes...)
}

// addPod stores a pod and reports it on the pod watch.
func (f *fakeCluster) addPod(t testing.TB, w *watch.FakeWatcher, p *corev1.Pod) {
	t.Helper()
	if err := f.kube.Tracker().Add(p); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	w.Modify(p)
}

// fakeLogs gives every pod two lines naming it.
type fakeLogs struct{}

func (fakeLogs) Open(_ context.Context, _, pod, _ string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("hello from " + pod + "\nbye\n")), nil
}

// makePod returns the pod of node in attempt of JobSet js.
func makePod(js string, node int, attempt int, phase corev1.PodPhase) *corev1.Pod {
	name := js + "-rank-0-" + itoa(node) + "-a" + itoa(attempt)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ml", UID: types.UID(name),
			Labels:      map[string]string{jobsetv1alpha2.JobSetNameKey: js, jobset.LabelRestartAttempt: itoa(attempt)},
			Annotations: map[string]string{jobset.AnnotationCompletionIndex: itoa(node)},
		},
		Status: corev1.PodStatus{Phase: phase},
	}
	switch phase {
	case corev1.PodRunning:
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobset.RankContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	case corev1.PodSucceeded:
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobset.RankContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
	}
	return p
}

func failedPod(js string, node, attempt int, code int32, at time.Time) *corev1.Pod {
	p := makePod(js, node, attempt, corev1.PodFailed)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: jobset.RankContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: "Error", FinishedAt: metav1.NewTime(at),
	}}}}
	return p
}

func jobSetWith(js *jobsetv1alpha2.JobSet, restarts int32, cond jobsetv1alpha2.JobSetConditionType, msg string) *jobsetv1alpha2.JobSet {
	js = js.DeepCopy()
	js.Status.Restarts = restarts
	if cond != "" {
		js.Status.Conditions = append(js.Status.Conditions, metav1.Condition{Type: string(cond), Status: metav1.ConditionTrue, Reason: "Reason" + string(cond), Message: msg})
	}
	return js
}

func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type runResult struct {
	res *Result
	err error
}

func start(ctx context.Context, l *Launcher, js *jobsetv1alpha2.JobSet) chan runResult {
	done := make(chan runResult, 1)
	go func() {
		res, err := l.Run(ctx, js, nil, int(*js.Spec.ReplicatedJobs[0].Template.Spec.Completions), 1)
		done <- runResult{res, err}
	}()
	return done
}

func wait(t testing.TB, done chan runResult) runResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return runResult{}
	}
}

func testJobSet(nodes int) *jobsetv1alpha2.JobSet {
	spec := &plan.Launch{
		Version: wire.LaunchVersion, Pipeline: "attrition", Image: "train:1", PipectlImage: "pipectl:test",
		Distributed: plan.Distributed{Nodes: nodes, ProcsPerNode: 1, MaxRestarts: 1},
	}
	return jobset.BuildJobSet(spec, jobset.BuildOptions{Namespace: "ml", Step: "train", Exec: wire.Args{Run: "run-1"}, Command: []string{"python3", "train.py"}})
}

// TestRunCompletes: terminal detection, resuming after a closed watch, logs
// of every rank with their prefix, and the JobSet deleted at the end.
func TestRunCompletes(t *testing.T) {
	f := newFakeCluster(t)
	js := testJobSet(2)
	done := start(context.Background(), f.launcher(), js)

	jw1, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	jw1.Modify(jobSetWith(js, 0, "", ""))
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodRunning))
	eventually(t, func() bool { return strings.Contains(f.errs.String(), "ranks: 0 pending, 2 running, 0 done") })
	// The API server ends the watch: the launcher must watch again.
	jw1.Stop()
	jw2 := f.nextJSWatch(t)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodSucceeded))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodSucceeded))
	jw2.Modify(jobSetWith(js, 0, jobsetv1alpha2.JobSetCompleted, "jobset completed"))

	r := wait(t, done)
	if r.err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", r.err, f.errs.String())
	}
	if r.res.PodsCreated <= 0 || r.res.Terminal.IsZero() {
		t.Errorf("Result = %+v, want the pods-created and terminal times", r.res)
	}
	out := f.out.String()
	for _, want := range []string{
		"[rank 0] hello from " + js.Name + "-rank-0-0-a0\n", "[rank 0] bye\n",
		"[rank 1] hello from " + js.Name + "-rank-0-1-a0\n", "[rank 1] bye\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rank logs lack %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "hello from"); got != 2 {
		t.Errorf("%d log streams, want one per pod (2):\n%s", got, out)
	}
	if d := f.deletions(); len(d) != 1 || d[0] != metav1.DeletePropagationBackground {
		t.Errorf("deletions %v, want one, Background", d)
	}
	if !strings.Contains(f.errs.String(), "ranks: 0 pending, 2 running, 0 done") {
		t.Errorf("no progress on stderr:\n%s", f.errs.String())
	}
}

// TestKubeLogs: the pods/log API (the fake clientset answers "fake logs").
func TestKubeLogs(t *testing.T) {
	f := newFakeCluster(t)
	l := f.launcher()
	l.Logs = nil
	js := testJobSet(1)
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodSucceeded))
	time.Sleep(50 * time.Millisecond)
	jw.Modify(jobSetWith(js, 0, jobsetv1alpha2.JobSetCompleted, ""))
	if r := wait(t, done); r.err != nil {
		t.Fatal(r.err)
	}
	if got := f.out.String(); got != "[rank 0] fake logs\n" {
		t.Errorf("rank logs %q, want %q", got, "[rank 0] fake logs\n")
	}
}

// TestRunFails: a restart is reported, then the failure names the rank
// that failed first, its exit code and its last lines.
func TestRunFails(t *testing.T) {
	f := newFakeCluster(t)
	js := testJobSet(2)
	done := start(context.Background(), f.launcher(), js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	t0 := time.Now().Truncate(time.Second)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, failedPod(js.Name, 1, 0, 3, t0))
	f.addPod(t, pw, failedPod(js.Name, 0, 0, 143, t0.Add(time.Second)))
	jw.Modify(jobSetWith(js, 1, "", ""))
	f.addPod(t, pw, failedPod(js.Name, 0, 1, 137, t0.Add(3*time.Second)))
	f.addPod(t, pw, failedPod(js.Name, 1, 1, 3, t0.Add(2*time.Second)))
	jw.Modify(jobSetWith(js, 1, jobsetv1alpha2.JobSetFailed, "jobset failed due to reaching max restarts"))

	r := wait(t, done)
	var fe *FailedError
	if !errors.As(r.err, &fe) {
		t.Fatalf("Run error %v (%T), want a *FailedError", r.err, r.err)
	}
	if fe.Rank != 1 || fe.ExitCode != 3 || fe.Restarts != 1 {
		t.Errorf("FailedError rank %d exit %d restarts %d, want rank 1 exit 3 restarts 1", fe.Rank, fe.ExitCode, fe.Restarts)
	}
	if want := []string{"hello from " + js.Name + "-rank-0-1-a1", "bye"}; strings.Join(fe.Last, "|") != strings.Join(want, "|") {
		t.Errorf("last lines %q, want %q", fe.Last, want)
	}
	msg := fe.Error()
	for _, want := range []string{"rank 1 failed: exited with code 3 (Error)", "after 1 gang restart", "max restarts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	errs := f.errs.String()
	for _, want := range []string{"gang restart 1: rank 1 (pod " + js.Name + "-rank-0-1-a0) exited with code 3", "  | bye"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// TestRunFailsSameSecond: ranks whose containers ended in the same second
// (FinishedAt's precision) are ordered by when the launcher saw them fail:
// the rank that failed first is named, not the lowest rank.
func TestRunFailsSameSecond(t *testing.T) {
	f := newFakeCluster(t)
	js := testJobSet(2)
	done := start(context.Background(), f.launcher(), js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	t0 := time.Now().Truncate(time.Second)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, failedPod(js.Name, 1, 0, 3, t0))
	time.Sleep(5 * time.Millisecond)
	f.addPod(t, pw, failedPod(js.Name, 0, 0, 1, t0))
	jw.Modify(jobSetWith(js, 0, jobsetv1alpha2.JobSetFailed, "jobset failed due to reaching max restarts"))

	r := wait(t, done)
	var fe *FailedError
	if !errors.As(r.err, &fe) {
		t.Fatalf("Run error %v (%T), want a *FailedError", r.err, r.err)
	}
	if fe.Rank != 1 || fe.ExitCode != 3 {
		t.Errorf("FailedError rank %d exit %d, want rank 1 exit 3 (it failed first)", fe.Rank, fe.ExitCode)
	}
}

// TestStartupDeadline: a rank that cannot be scheduled fails the launch
// after the startup timeout with the scheduler's reason, and the JobSet is
// deleted (foreground) with its pods.
func TestStartupDeadline(t *testing.T) {
	js := testJobSet(2)
	pending := makePod(js.Name, 1, 0, corev1.PodPending)
	pending.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev1", Namespace: "ml"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pending.Name, Namespace: "ml", UID: pending.UID},
		Reason:         "FailedScheduling", Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
		LastTimestamp: metav1.Now(),
	}
	f := newFakeCluster(t, ev)
	l := f.launcher()
	l.StartupTimeout = 300 * time.Millisecond
	var got attempts
	l.Ended = got.ended
	done := start(context.Background(), l, js)
	f.nextJSWatch(t)
	pw := f.nextPodWatch(t)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, pending)

	r := wait(t, done)
	var se *StartupError
	if !errors.As(r.err, &se) {
		t.Fatalf("Run error %v, want a *StartupError", r.err)
	}
	if se.Running != 1 || len(se.Pending) != 1 || se.Pending[0].Rank != 1 || !se.Deleted {
		t.Errorf("StartupError %+v, want rank 1 pending, 1 running, deleted", se)
	}
	if want := "FailedScheduling: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."; se.Pending[0].Reason != want {
		t.Errorf("pending reason %q, want %q", se.Pending[0].Reason, want)
	}
	if d := f.deletions(); len(d) != 1 || d[0] != metav1.DeletePropagationForeground {
		t.Errorf("deletions %v, want one, Foreground", d)
	}
	// While it waited, the progress line said why (the pod's condition).
	if want := "ranks: 1 pending, 1 running, 0 done (rank 1 pending: Unschedulable: 0/3 nodes are available)"; !strings.Contains(f.errs.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, f.errs.String())
	}
	// The step's record gets the attempt, its reason and message.
	if got.count() != 1 || got.got[0].Reason != record.ReasonStartup || got.got[0].Restarted ||
		!strings.Contains(got.got[0].Message, "rank 1 (pod "+pending.Name+"): FailedScheduling: 0/3 nodes are available") {
		t.Errorf("gang attempts %+v, want one, startup, naming rank 1 and the scheduler's reason", got.got)
	}
	if _, err := f.jobsets.JobsetV1alpha2().JobSets("ml").Get(context.Background(), js.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the JobSet is still there: %v", err)
	}
}

// TestStartupDeadlineNoPods: ranks without pods are named too.
func TestStartupDeadlineNoPods(t *testing.T) {
	f := newFakeCluster(t)
	l := f.launcher()
	l.StartupTimeout = 100 * time.Millisecond
	r := wait(t, start(context.Background(), l, testJobSet(2)))
	var se *StartupError
	if !errors.As(r.err, &se) || len(se.Pending) != 2 || se.Pending[1].Reason != "no pod created" {
		t.Fatalf("Run error %v, want both ranks pending with no pod", r.err)
	}
}

// TestCancel: cancelling deletes the JobSet in the foreground and waits for
// its pods to go.
func TestCancel(t *testing.T) {
	f := newFakeCluster(t)
	js := testJobSet(2)
	ctx, cancel := context.WithCancel(context.Background())
	done := start(ctx, f.launcher(), js)
	f.nextJSWatch(t)
	pw := f.nextPodWatch(t)
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodRunning))
	cancel()
	r := wait(t, done)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Run error %v, want context.Canceled", r.err)
	}
	if d := f.deletions(); len(d) != 1 || d[0] != metav1.DeletePropagationForeground {
		t.Errorf("deletions %v, want one, Foreground", d)
	}
	pods, _ := f.kube.CoreV1().Pods("ml").List(context.Background(), metav1.ListOptions{})
	if len(pods.Items) != 0 {
		t.Errorf("%d pods left", len(pods.Items))
	}
}

// TestCreateReplacesLeftover: a JobSet left by an earlier attempt is replaced.
func TestCreateReplacesLeftover(t *testing.T) {
	f := newFakeCluster(t)
	js := testJobSet(1)
	if _, err := f.jobsets.JobsetV1alpha2().JobSets("ml").Create(context.Background(), js, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := start(context.Background(), f.launcher(), js)
	jw := f.nextJSWatch(t)
	jw.Modify(jobSetWith(js, 0, jobsetv1alpha2.JobSetCompleted, ""))
	if r := wait(t, done); r.err != nil {
		t.Fatal(r.err)
	}
	if d := f.deletions(); len(d) != 2 || d[0] != metav1.DeletePropagationForeground {
		t.Errorf("deletions %v, want the leftover's (Foreground) and the finished one's", d)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
