package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang"
)

// stuckLogs gives every pod one line naming it and a line of its runtime
// (not the rank's: "pipectl: …"), then nothing: the stream stays open, as
// a live rank's that stopped printing, until ctx ends.
type stuckLogs struct{}

func (stuckLogs) Open(ctx context.Context, _, pod, _ string) (io.ReadCloser, error) {
	r, w := io.Pipe()
	go func() {
		_, _ = w.Write([]byte("epoch 3 on " + pod + "\n" + wire.RuntimeLinePrefix + "checkpoint 1 kept\n"))
		<-ctx.Done()
		w.Close()
	}()
	return r, nil
}

// attempts collects what a Launcher's Ended is told, with when.
type attempts struct {
	mu  sync.Mutex
	got []record.GangAttempt
	at  []time.Time
}

func (a *attempts) ended(g record.GangAttempt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got, a.at = append(a.got, g), append(a.at, time.Now())
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

// TestRunStalls: a gang whose ranks print nothing for StallTimeout once
// all its pods run is stalled: the time a rank pod is Pending does not
// count; with a restart left its pods are deleted (the JobSet restarts the
// gang) and the attempt recorded as stalled naming each rank's last line;
// with none left the JobSet is deleted and Run fails with the
// *gang.StallError.
func TestRunStalls(t *testing.T) {
	const timeout = 300 * time.Millisecond
	f := newFakeCluster(t)
	l := f.launcher()
	l.Logs, l.StallTimeout = stuckLogs{}, timeout
	var got attempts
	l.Ended = got.ended
	js := testJobSet(2) // maxRestarts 1
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	jw.Modify(jobSetWith(js, 0, "", ""))
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodPending))
	// Three stall timeouts with a rank Pending: startup, not a stall.
	time.Sleep(3 * timeout)
	if n := got.count(); n != 0 {
		t.Fatalf("%d gang attempt(s) ended while a rank pod was Pending: %+v\n%s", n, got.got, f.errs.String())
	}
	running := time.Now()
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodRunning))
	eventually(t, func() bool { return got.count() == 1 })
	took := got.at[0].Sub(running)
	t.Logf("attempt 1 stalled %s after both pods ran (stallTimeout %s)", took, timeout)
	if took < timeout || took > timeout+time.Second {
		t.Errorf("stall detected %s after the pods ran, want within [%s, %s]", took, timeout, timeout+time.Second)
	}
	a := got.got[0]
	if a.Attempt != 1 || a.Reason != record.ReasonStalled || !a.Restarted || len(a.Ranks) != 2 {
		t.Fatalf("gang attempt %+v, want attempt 1 stalled, restarted, with 2 ranks", a)
	}
	for i, r := range a.Ranks {
		if want := "epoch 3 on " + js.Name + "-rank-0-" + itoa(i) + "-a0"; r.Rank != i || r.LastLine != want || r.LastProgress == nil {
			t.Errorf("rank state %+v, want rank %d, last line %q", r, i, want)
		}
	}
	// The stalled attempt's pods were deleted: the Job fails, the JobSet restarts the gang.
	eventually(t, func() bool {
		_, err0 := f.kube.CoreV1().Pods("ml").Get(context.Background(), js.Name+"-rank-0-0-a0", metav1.GetOptions{})
		_, err1 := f.kube.CoreV1().Pods("ml").Get(context.Background(), js.Name+"-rank-0-1-a0", metav1.GetOptions{})
		return apierrors.IsNotFound(err0) && apierrors.IsNotFound(err1)
	})
	if len(f.deletions()) != 0 {
		t.Errorf("JobSet deleted on a stall with a restart left: %v", f.deletions())
	}
	jw.Modify(jobSetWith(js, 1, "", ""))
	f.addPod(t, pw, makePod(js.Name, 0, 1, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 1, corev1.PodRunning))

	r := wait(t, done)
	var se *gang.StallError
	if !errors.As(r.err, &se) {
		t.Fatalf("Run error %v (%T), want a *gang.StallError\n%s", r.err, r.err, f.errs.String())
	}
	if got.count() != 2 || got.got[1].Attempt != 2 || got.got[1].Restarted || got.got[1].Reason != record.ReasonStalled {
		t.Errorf("gang attempts %+v, want a second, stalled, not restarted", got.got)
	}
	if d := f.deletions(); len(d) != 1 || d[0] != metav1.DeletePropagationForeground {
		t.Errorf("deletions %v, want the JobSet's, Foreground", d)
	}
	errs := f.errs.String()
	for _, want := range []string{
		"gang attempt 1 stalled: no rank made progress for 300ms; every rank stopped",
		`rank 1: last progress `, `last line "epoch 3 on ` + js.Name + `-rank-0-1-a0"`,
		"restarting all 2 rank pod(s) (restart 1 of 1)",
		"gang restart 1: attempt 1 stalled (no rank made progress for 300ms)",
		"gang attempt 2 stalled", "no restart left (maxRestarts 1)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// TestRunRecordsFailedAttempts: a restart after a rank failed and the
// final failure are gang attempts too, failed, naming the rank.
func TestRunRecordsFailedAttempts(t *testing.T) {
	f := newFakeCluster(t)
	l := f.launcher()
	var got attempts
	l.Ended = got.ended
	js := testJobSet(2)
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	t0 := time.Now().Truncate(time.Second)
	f.addPod(t, pw, failedPod(js.Name, 1, 0, 3, t0))
	jw.Modify(jobSetWith(js, 1, "", ""))
	f.addPod(t, pw, failedPod(js.Name, 1, 1, 3, t0.Add(time.Second)))
	jw.Modify(jobSetWith(js, 1, "Failed", "jobset failed due to reaching max restarts"))
	if r := wait(t, done); r.err == nil {
		t.Fatal("Run succeeded, want a failure")
	}
	if got.count() != 2 {
		t.Fatalf("gang attempts %+v, want 2", got.got)
	}
	first, last := got.got[0], got.got[1]
	if first.Attempt != 1 || first.Reason != record.ReasonFailed || !first.Restarted || !strings.Contains(first.Message, "rank 1 (pod ") {
		t.Errorf("first attempt %+v, want failed, restarted, naming rank 1", first)
	}
	if last.Attempt != 2 || last.Restarted || !strings.Contains(last.Message, "rank 1 failed: exited with code 3") {
		t.Errorf("last attempt %+v, want 2, not restarted, rank 1 exited with code 3", last)
	}
}

// TestRunStallPodsNotDeletable: a stalled gang whose rank pods the launcher
// may not delete (no RBAC delete on pods) cannot restart: the JobSet is
// deleted and Run returns the stall, rather than waiting on the gang.
func TestRunStallPodsNotDeletable(t *testing.T) {
	const timeout = 300 * time.Millisecond
	f := newFakeCluster(t)
	f.kube.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "x", errors.New("RBAC: no delete"))
	})
	l := f.launcher()
	l.Logs, l.StallTimeout = stuckLogs{}, timeout
	var got attempts
	l.Ended = got.ended
	js := testJobSet(2) // maxRestarts 1
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	jw.Modify(jobSetWith(js, 0, "", ""))
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodRunning))
	r := wait(t, done)
	var se *gang.StallError
	if !errors.As(r.err, &se) {
		t.Fatalf("Run error %v (%T), want a *gang.StallError\n%s", r.err, r.err, f.errs.String())
	}
	if got.count() != 1 || got.got[0].Restarted {
		t.Errorf("gang attempts %+v, want one, not restarted", got.got)
	}
	if d := f.deletions(); len(d) != 1 {
		t.Errorf("deletions %v, want the JobSet's", d)
	}
	if errs := f.errs.String(); !strings.Contains(errs, "its rank pods cannot be stopped") || !strings.Contains(errs, "RBAC: no delete") {
		t.Errorf("launcher log does not say why the gang was not restarted:\n%s", errs)
	}
}

// TestStopAttemptDeletesAtOnce: a stalled attempt's 64 rank pods are
// deleted maxDeletes at a time, not one after the other (each deletion
// takes 20ms at an API server over HTTP); one that fails is named.
func TestStopAttemptDeletesAtOnce(t *testing.T) {
	const pods, each = 64, 20 * time.Millisecond
	var mu sync.Mutex
	inFlight, peak := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		time.Sleep(each)
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/pods/js-rank-0-7-a0") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "message": "boom", "code": 403}`)
			return
		}
		fmt.Fprint(w, `{"kind": "Status", "apiVersion": "v1", "status": "Success"}`)
	}))
	defer srv.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{l: &Launcher{Clients: Clients{Kube: kube}}, ns: "ml", pods: map[types.UID]*rankPod{}}
	for n := range pods {
		p := makePod("js", n, 0, corev1.PodRunning)
		s.pods[p.UID] = &rankPod{pod: p, node: n}
	}
	began := time.Now()
	err = s.stopAttempt(context.Background(), 0)
	took := time.Since(began)
	if err == nil || !strings.Contains(err.Error(), "delete stalled pod js-rank-0-7-a0: boom") || strings.Count(err.Error(), "delete stalled pod") != 1 {
		t.Errorf("stopAttempt: %v, want the one failed deletion named", err)
	}
	if peak != maxDeletes || took > pods*each/4 {
		t.Errorf("%d pods deleted in %s, at most %d at once; want %d at once (one after the other: %s)", pods, took, peak, maxDeletes, pods*each)
	}
	t.Logf("%d pods deleted in %s, %d at once", pods, took.Round(time.Millisecond), peak)
}
