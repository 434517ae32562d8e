package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// Fault drills: a part of the cluster fails while a pipeline runs. Each drill says what
// must happen; `pipectl help troubleshooting` says what the user sees and does.

// MinIO is killed while a step pod uploads its output and comes back 3 s later: the
// store waits for it (artifacts.DefaultS3ReconnectWait) and the step succeeds, its
// output whole and its record written; the object and the record appear only at the end.
func TestDrillMinIORestartMidUpload(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	const size = 300_000_000
	wf := l.compile(ctx, writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: big}
steps:
  - name: big
    component:
      metadata: {name: big}
      image: e2e-shell:1
      outputs: [{name: blob, type: Dataset}]
      command: [sh, -c, 'head -c 300000000 /dev/urandom > "$0"; echo written', "{{outputs.blob.path}}"]
`))
	run := "minio-drill"
	pod := wf.podOf(t, "big", run, nil, "")
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// MinIO keeps an upload in progress under .minio.sys/multipart until it completes.
	multipart := filepath.Join(c.Dir, "minio", ".minio.sys", "multipart")
	uploading := func() bool {
		entries, _ := os.ReadDir(multipart)
		return len(entries) > 0
	}
	for !uploading() {
		select {
		case <-ctx.Done():
			t.Fatalf("the step's upload never began: %v", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.KillMinIO(); err != nil {
		t.Fatal(err)
	}
	if !uploading() {
		t.Fatal("the upload completed before MinIO was killed: the drill tested nothing")
	}
	time.Sleep(3 * time.Second)
	if err := c.StartMinIO(ctx); err != nil {
		t.Fatal(err)
	}
	p := l.waitPodEnded(ctx, pod.Name)
	logs := l.logs(ctx, pod.Name)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("step pod %s, want Succeeded across the MinIO restart; log:\n%s", p.Status.Phase, logs)
	}
	base := runsPrefix + "/" + run + "/big/"
	var meta struct {
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(l.s3Cat(ctx, base+"blob.meta.json")), &meta); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if err := l.s3Read(ctx, base+"blob", h); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); meta.Size != size || got != meta.SHA256 {
		t.Errorf("blob: metadata says %d bytes sha256 %s; the object's sha256 is %s (want %d bytes)", meta.Size, meta.SHA256, got, size)
	}
	if rec := l.s3Cat(ctx, base+"outputs.json"); !strings.Contains(rec, `"sha256": "`+meta.SHA256+`"`) {
		t.Errorf("outputs.json does not record the blob's sha256 %s:\n%s", meta.SHA256, rec)
	}
	var left []string
	for u := range l.s3.ListIncompleteUploads(ctx, l.bucket, "", true) {
		if u.Err != nil {
			t.Fatalf("list incomplete uploads of %s: %v", l.bucket, u.Err)
		}
		left = append(left, u.Key+" "+u.UploadID)
	}
	if len(left) > 0 {
		t.Errorf("incomplete uploads left:\n%s", strings.Join(left, "\n"))
	}
}

// kube-apiserver is killed while `pipectl run --on argo` follows a distributed step
// whose launcher waits on its JobSet, and comes back 3 s later: the launcher's and the
// follower's watches resume, and the run completes with the step's output.
func TestDrillAPIServerRestart(t *testing.T) {
	a, ctx := newArgoLab(t)
	// The ranks run long enough for the API server to be away and back.
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: slow-gang}
steps:
  - name: train
    component:
      metadata: {name: slow-gang}
      outputs: [{name: answer, type: int}]
      image: e2e-shell:1
      command: [sh, -c, 'echo "rank $RANK up"; sleep 15; echo "rank $RANK done"; printf 42 > "$0"', "{{outputs.answer.path}}"]
    distributed: {nodes: 2}
`)
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code, err := a.exec(ctx, a.argoArgs(file)...)
		if err != nil {
			errOut += err.Error()
		}
		done <- result{out, errOut, code}
	}()
	ranksRunning(t, ctx, a.c, a.ns, 2)
	began := time.Now()
	if err := a.c.RestartAPIServer(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server away and the test bed ready again in %s", time.Since(began).Round(100*time.Millisecond))
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("pipectl run did not end")
	}
	t.Logf("pipectl run stderr:\n%s", r.errOut)
	if r.code != 0 {
		t.Fatalf("pipectl run exit code %d, want 0 across the API server restart\nstdout:\n%s", r.code, r.out)
	}
	for _, want := range []string{"[train] [rank 0] rank 0 done", "[train] [rank 1] rank 1 done"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.errOut, "answer = 42") {
		t.Errorf("stderr lacks the output answer = 42")
	}
}

// The launcher pod of a running distributed step is deleted (kubectl delete pod): its
// JobSet and rank pods are gone within seconds, `pipectl run --on argo` fails, and the
// run is recorded Failed with the reason.
func TestDrillLauncherPodDeleted(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: orphan}
steps:
  - name: train
    component:
      metadata: {name: sleepy}
      image: e2e-shell:1
      command: [sh, -c, 'echo "rank $RANK up"; sleep 300']
    distributed: {nodes: 2}
`)
	cmd := exec.CommandContext(ctx, images.pipectl, a.argoArgs(file)...)
	cmd.Env = a.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pods := a.c.Client.CoreV1().Pods(a.ns)
	ranksRunning(t, ctx, a.c, a.ns, 2)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "workflows.argoproj.io/workflow"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the workflow's pods: %v %v, want the launcher's alone", list, err)
	}
	launcher := &list.Items[0]
	// Argo creates again a step pod that goes within 10 s of its start
	// (RECENTLY_STARTED_POD_DURATION), taking it for one whose creation it
	// has not seen yet: this drill is a pod lost mid-run, after that.
	time.Sleep(time.Until(launcher.CreationTimestamp.Add(12 * time.Second)))
	if err := pods.Delete(ctx, launcher.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitFor(t, ctx, "JobSet and rank pods gone", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
		if err != nil {
			return false, err
		}
		b, err := a.c.Client.Discovery().RESTClient().Get().AbsPath("/apis/jobset.x-k8s.io/v1alpha2/namespaces/" + a.ns + "/jobsets").DoRaw(ctx)
		return err == nil && len(list.Items) == 0 && !strings.Contains(string(b), `"name":"`), err
	})
	gone := time.Since(deleted)
	t.Logf("JobSet and rank pods gone %s after the launcher pod's deletion", gone.Round(100*time.Millisecond))
	if gone > 30*time.Second {
		t.Errorf("the JobSet and its pods took %s to go, want seconds", gone)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("pipectl run succeeded after its launcher pod was deleted\nstderr:\n%s", errOut.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("pipectl run still follows 90 s after the launcher pod's deletion\nstderr:\n%s", errOut.String())
	}
	t.Logf("pipectl run stderr:\n%s", errOut.String())
	m := runID.FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("no run id in:\n%s", errOut.String())
	}
	js, _, code := a.pipectl(ctx, "runs", "get", m[1], "-o", "json")
	var rec struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Steps   []struct {
			Name    string `json:"name"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 {
		t.Fatalf("runs get: %v (exit %d)\n%s", err, code, js)
	}
	if rec.Status != "Failed" || len(rec.Steps) != 1 || rec.Steps[0].Status != "Failed" || !strings.Contains(rec.Steps[0].Message, "deleted") {
		t.Errorf("run record, want Failed with step train Failed saying its pod was deleted:\n%s", js)
	}
}

// ranksRunning waits until n rank pods (of any JobSet) of namespace ns run.
func ranksRunning(t *testing.T, ctx context.Context, c *testbed.Cluster, ns string, n int) {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf("%d ranks running", n), func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == n, nil
	})
}

// The node running a gang's ranks is lost: its node agent killed (the rank processes
// die with it) and the Node deleted, as when a machine goes and the cluster drops it.
// The pod garbage collector deletes the pods bound to the missing node, their Job
// fails, JobSet restarts the gang (maxRestarts 1) on the node left, and the step
// succeeds with its output.
func TestDrillNodeLost(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: lost}
steps:
  - name: gpu
    component:
      metadata: {name: lost}
      outputs: [{name: answer, type: int}]
      image: e2e-shell:1
      command: [sh, -c, 'echo "rank $RANK on $(hostname)"; sleep 10; printf 42 > "$0"', "{{outputs.answer.path}}"]
    distributed: {nodes: 2, maxRestarts: 1}
`))
	lost, err := c.StartNode(ctx, "pipectl-node-lost")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lost.Remove(context.Background()); err != nil {
			t.Errorf("remove node %s: %v", lost.Name, err)
		}
	})
	// The ranks go to the new node: the test bed's plain node is cordoned (the launcher
	// is bound to it by name, which a cordon does not stop) until the node is lost.
	nodes := c.Client.CoreV1().Nodes()
	cordon := func(on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%v}}`, on)
		if _, err := nodes.Patch(context.Background(), testbed.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cordon(true)
	t.Cleanup(func() { cordon(false) })
	out := filepath.Join(l.dir, "out")
	pod := wf.podOf(t, "gpu", "lost-run", nil, out)
	pod.Spec.NodeName = testbed.NodeName
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ranksRunning(t, ctx, c, ns, 2)
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != lost.Name {
			t.Fatalf("rank pod %s runs on %s, want %s", p.Name, p.Spec.NodeName, lost.Name)
		}
	}
	lost.Kill()
	if err := nodes.Delete(ctx, lost.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cordon(false)
	began := time.Now()
	p := l.waitPodEnded(ctx, pod.Name)
	logs := l.logs(ctx, pod.Name)
	t.Logf("launcher ended %s after the node was lost", time.Since(began).Round(time.Second))
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded after a gang restart; log:\n%s", p.Status.Phase, logs)
	}
	if !strings.Contains(logs, "gang restart 1") {
		t.Errorf("launcher log lacks the gang restart:\n%s", logs)
	}
	if b, err := os.ReadFile(filepath.Join(out, "outputs", "answer")); err != nil || string(b) != "42" {
		t.Errorf("output parameter answer = %q, %v; want 42", b, err)
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}
