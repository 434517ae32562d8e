package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// The launcher's tests run what Argo would run: the compiled workflow's step and
// launcher templates as pods (Argo references replaced by values), on the test bed's
// nodes, against its MinIO, with the launcher's RBAC.

const (
	s3Secret   = "pipectl-s3"
	runsPrefix = "runs"
)

// lab is one namespace prepared for launcher pods (Cluster.PrepareNamespace: RBAC, the
// S3 secret, a bucket).
type lab struct {
	tb     testing.TB
	c      *testbed.Cluster
	ns     string
	bucket string
	js     jobsetclient.Interface
	s3     *minio.Client // the test bed's MinIO
	dir    string
}

// newLab prepares a namespace (a fresh one from setup) for launcher pods.
func newLab(tb testing.TB, c *testbed.Cluster, ns string, ctx context.Context) *lab {
	tb.Helper()
	if images.launcherErr != nil {
		tb.Fatalf("launcher images: %v", images.launcherErr)
	}
	l := &lab{tb: tb, c: c, ns: ns, bucket: ns, dir: tb.TempDir()}
	var err error
	if l.js, err = jobsetclient.NewForConfig(c.Config); err != nil {
		tb.Fatal(err)
	}
	if err := c.PrepareNamespace(ctx, ns, images.repoRoot, l.bucket); err != nil {
		tb.Fatal(err)
	}
	if l.s3, err = c.S3(); err != nil {
		tb.Fatal(err)
	}
	return l
}

// s3Cat returns the object key of the lab's bucket.
func (l *lab) s3Cat(ctx context.Context, key string) string {
	l.tb.Helper()
	var b bytes.Buffer
	if err := l.s3Read(ctx, key, &b); err != nil {
		l.tb.Fatal(err)
	}
	return b.String()
}

// s3Read copies the object key of the lab's bucket to w.
func (l *lab) s3Read(ctx context.Context, key string, w io.Writer) error {
	obj, err := l.s3.GetObject(ctx, l.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("get s3://%s/%s: %w", l.bucket, key, err)
	}
	defer obj.Close()
	if _, err := io.Copy(w, obj); err != nil {
		return fmt.Errorf("read s3://%s/%s: %w", l.bucket, key, err)
	}
	return nil
}

// s3Stat fails the test unless the object key of the lab's bucket exists.
func (l *lab) s3Stat(ctx context.Context, key string) {
	l.tb.Helper()
	if _, err := l.s3.StatObject(ctx, l.bucket, key, minio.StatObjectOptions{}); err != nil {
		l.tb.Fatalf("stat s3://%s/%s: %v", l.bucket, key, err)
	}
}

// s3CopyPrefix copies every object of the lab's bucket below prefix from to the same
// key below prefix to (server-side copies).
func (l *lab) s3CopyPrefix(ctx context.Context, from, to string) {
	l.tb.Helper()
	n := 0
	for obj := range l.s3.ListObjects(ctx, l.bucket, minio.ListObjectsOptions{Prefix: from, Recursive: true}) {
		if obj.Err != nil {
			l.tb.Fatalf("list s3://%s/%s: %v", l.bucket, from, obj.Err)
		}
		dst := to + strings.TrimPrefix(obj.Key, from)
		if _, err := l.s3.CopyObject(ctx, minio.CopyDestOptions{Bucket: l.bucket, Object: dst},
			minio.CopySrcOptions{Bucket: l.bucket, Object: obj.Key}); err != nil {
			l.tb.Fatalf("copy s3://%s/%s to %s: %v", l.bucket, obj.Key, dst, err)
		}
		n++
	}
	if n == 0 {
		l.tb.Fatalf("copy s3://%s/%s: no objects", l.bucket, from)
	}
}

func mustYAML(tb testing.TB, doc string, into any) {
	tb.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		tb.Fatalf("%v in:\n%s", err, doc)
	}
}

// pipectl runs the pipectl binary built for the tests.
func pipectl(tb testing.TB, ctx context.Context, args ...string) string {
	tb.Helper()
	return pipectlEnv(tb, ctx, nil, args...)
}

// pipectlEnv runs the pipectl binary built for the tests with env added to
// the test's environment.
func pipectlEnv(tb testing.TB, ctx context.Context, env []string, args ...string) string {
	tb.Helper()
	cmd := exec.CommandContext(ctx, images.pipectl, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pipectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// workflow is a compiled pipeline, as generic JSON.
type workflow struct {
	spec   map[string]any
	params map[string]string
}

// compile compiles a pipeline file for the lab's store and MinIO, with
// --no-cache: the lab runs the same step again and again, and means it to run.
func (l *lab) compile(ctx context.Context, file string) *workflow {
	l.tb.Helper()
	// The store's credentials and endpoint: compile ships the components'
	// code to it.
	out := pipectlEnv(l.tb, ctx, l.c.Env(), append([]string{"compile", file, "--no-cache", "--image", pipectlImage,
		"--artifacts", "s3://" + l.bucket + "/" + runsPrefix, "--s3-secret", s3Secret,
		"--s3-endpoint", "http://" + l.c.MinIOEndpoint, "--s3-region", "us-east-1"}, imageFlags...)...)
	var wf struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(out), &wf); err != nil {
		l.tb.Fatal(err)
	}
	w := &workflow{spec: wf.Spec, params: map[string]string{}}
	args, _ := wf.Spec["arguments"].(map[string]any)
	ps, _ := args["parameters"].([]any)
	for _, p := range ps {
		m := p.(map[string]any)
		w.params[m["name"].(string)] = fmt.Sprint(m["value"])
	}
	return w
}

// task returns the DAG task's template and its step argument.
func (w *workflow) task(tb testing.TB, name string) (tmpl map[string]any, step string) {
	tb.Helper()
	templates := w.spec["templates"].([]any)
	byName := map[string]map[string]any{}
	for _, t := range templates {
		m := t.(map[string]any)
		byName[m["name"].(string)] = m
	}
	for _, t := range byName["main"]["dag"].(map[string]any)["tasks"].([]any) {
		task := t.(map[string]any)
		if task["name"] != name {
			continue
		}
		for _, p := range task["arguments"].(map[string]any)["parameters"].([]any) {
			if pm := p.(map[string]any); pm["name"] == "step" {
				step = pm["value"].(string)
			}
		}
		return byName[task["template"].(string)], step
	}
	tb.Fatalf("workflow has no task %s", name)
	return nil, ""
}

var argoRef = regexp.MustCompile(`\{\{(workflow\.name|inputs\.parameters\.step|workflow\.parameters\.([A-Za-z0-9_-]+))\}\}`)

// podOf is the pod Argo would create for a task of run: the template's containers with
// Argo's references replaced by values (params overriding the workflow's defaults), the
// workflow's volumes (the one at /var/run/pipectl, where a launcher writes its output
// parameters, a host folder the test reads: outDir).
func (w *workflow) podOf(tb testing.TB, task, run string, params map[string]string, outDir string) *corev1.Pod {
	tb.Helper()
	tmpl, step := w.task(tb, task)
	subst := func(s string) string {
		return argoRef.ReplaceAllStringFunc(s, func(ref string) string {
			m := argoRef.FindStringSubmatch(ref)
			switch {
			case m[1] == "workflow.name":
				return run
			case m[1] == "inputs.parameters.step":
				return step
			}
			if v, ok := params[m[2]]; ok {
				return v
			}
			v, ok := w.params[m[2]]
			if !ok {
				tb.Fatalf("no value for %s", ref)
			}
			return v
		})
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return subst(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	var spec struct {
		ServiceAccountName    string             `json:"serviceAccountName,omitempty"`
		ActiveDeadlineSeconds *int64             `json:"activeDeadlineSeconds,omitempty"`
		InitContainers        []corev1.Container `json:"initContainers,omitempty"`
		Container             corev1.Container   `json:"container"`
	}
	fromJSON(tb, walk(deepCopy(tb, tmpl)), &spec)
	var volumes []corev1.Volume
	fromJSON(tb, w.spec["volumes"], &volumes)
	var labels map[string]string
	if pm, ok := w.spec["podMetadata"].(map[string]any); ok {
		fromJSON(tb, walk(deepCopy(tb, pm["labels"])), &labels)
	}
	spec.Container.Name = "main"
	if outDir != "" {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for _, m := range spec.Container.VolumeMounts {
		if m.MountPath != "/var/run/pipectl" || outDir == "" {
			continue
		}
		for i := range volumes {
			if volumes[i].Name == m.Name {
				volumes[i].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: outDir}}
			}
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: task + "-" + run, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy:         corev1.RestartPolicyNever,
			ServiceAccountName:    spec.ServiceAccountName,
			ActiveDeadlineSeconds: spec.ActiveDeadlineSeconds,
			Volumes:               volumes,
			InitContainers:        spec.InitContainers,
			Containers:            []corev1.Container{spec.Container},
		},
	}
}

func deepCopy(tb testing.TB, v any) any {
	var out any
	fromJSON(tb, v, &out)
	return out
}

func fromJSON(tb testing.TB, v, into any) {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		tb.Fatal(err)
	}
}

// launchSpec decodes the --distributed flag of a launcher pod.
func launchSpec(tb testing.TB, pod *corev1.Pod) map[string]any {
	tb.Helper()
	for _, a := range pod.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--distributed="); ok {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				tb.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				tb.Fatal(err)
			}
			return m
		}
	}
	tb.Fatal("launcher pod has no --distributed")
	return nil
}

// runPod creates pod and waits until it ended; it returns the pod and its log.
func (l *lab) runPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, string) {
	l.tb.Helper()
	pods := l.c.Client.CoreV1().Pods(l.ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		l.tb.Fatal(err)
	}
	p := l.waitPodEnded(ctx, pod.Name)
	return p, l.logs(ctx, pod.Name)
}

func (l *lab) waitPodEnded(ctx context.Context, name string) *corev1.Pod {
	l.tb.Helper()
	var p *corev1.Pod
	poll(l.tb, ctx, "pod "+name+" to end", func(ctx context.Context) (bool, error) {
		var err error
		p, err = l.c.Client.CoreV1().Pods(l.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	return p
}

func (l *lab) logs(ctx context.Context, pod string) string {
	b, err := l.c.Client.CoreV1().Pods(l.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil {
		l.tb.Fatalf("logs of %s: %v", pod, err)
	}
	return string(b)
}

// poll is waitFor for testing.TB (benchmarks too).
func poll(tb testing.TB, ctx context.Context, what string, cond func(context.Context) (bool, error)) {
	tb.Helper()
	for {
		ok, err := cond(ctx)
		if err == nil && ok {
			return
		}
		if apierrors.IsNotFound(err) || err == nil {
			err = nil
		} else if ctx.Err() == nil {
			tb.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// noJobSetLeft waits until the namespace holds no JobSet and no JobSet pod.
func (l *lab) noJobSetLeft(ctx context.Context, within time.Duration) {
	l.tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	poll(l.tb, ctx, "no JobSet and no rank pod left", func(ctx context.Context) (bool, error) {
		jss, err := l.js.JobsetV1alpha2().JobSets(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := l.c.Client.CoreV1().Pods(l.ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
		if err != nil {
			return false, err
		}
		return len(jss.Items) == 0 && len(pods.Items) == 0, nil
	})
}

// preprocess runs the example's preprocess step as a pod (the compiled step pod: init
// container installing pipectl, the example's image running `pipectl exec`) for run.
func (l *lab) preprocess(ctx context.Context, wf *workflow, run string, params map[string]string) {
	l.tb.Helper()
	p, logs := l.runPod(ctx, wf.podOf(l.tb, "preprocess", run, params, ""))
	if p.Status.Phase != corev1.PodSucceeded {
		l.tb.Fatalf("preprocess pod %s: %s\n%s", p.Name, p.Status.Phase, logs)
	}
	l.s3Stat(ctx, runsPrefix+"/"+run+"/preprocess/train.meta.json")
}

// copyRun copies one step's outputs of run from to run to (a train step's input).
func (l *lab) copyStep(ctx context.Context, from, to, step string) {
	l.tb.Helper()
	base := runsPrefix + "/"
	l.s3CopyPrefix(ctx, base+from+"/"+step+"/", base+to+"/"+step+"/")
}

// exampleParams make the example small: a short preprocess, one epoch.
var exampleParams = map[string]string{"rows": "4000", "epochs": "1"}

// timings are the launcher's `pipectl launch: timing NAME=D` lines.
func timings(tb testing.TB, log string) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, m := range regexp.MustCompile(`pipectl launch: timing ([a-z-]+)=(\S+)`).FindAllStringSubmatch(log, -1) {
		d, err := time.ParseDuration(m[2])
		if err != nil {
			tb.Errorf("timing %s: %v", m[0], err)
		}
		out[m[1]] = d
	}
	return out
}

// attritionLab is a lab with the example compiled and its preprocess step run once
// (run "base"); each scenario copies its outputs into its own run.
type attritionLab struct {
	*lab
	wf *workflow
}

func newAttritionLab(tb testing.TB, c *testbed.Cluster, ns string, ctx context.Context, pipeline string) *attritionLab {
	tb.Helper()
	l := newLab(tb, c, ns, ctx)
	a := &attritionLab{lab: l, wf: l.compile(ctx, pipeline)}
	a.preprocess(ctx, a.wf, "base", exampleParams)
	return a
}

// train runs the train step's launcher pod for run (preprocess outputs copied from base)
// and returns the ended pod and its log.
func (a *attritionLab) train(ctx context.Context, run string) (*corev1.Pod, string, string) {
	a.tb.Helper()
	a.copyStep(ctx, "base", run, "preprocess")
	out := filepath.Join(a.dir, "out-"+run)
	if err := os.MkdirAll(out, 0o755); err != nil {
		a.tb.Fatal(err)
	}
	p, logs := a.runPod(ctx, a.wf.podOf(a.tb, "train", run, exampleParams, out))
	return p, logs, out
}

// examplePipelineCopy copies examples/attrition into a temp folder and applies edit to
// its pipeline.yaml; it returns the copy's pipeline file.
func examplePipelineCopy(tb testing.TB, edit func(string) string) string {
	tb.Helper()
	src := filepath.Join(images.repoRoot, "examples", "attrition")
	dst := tb.TempDir()
	cp := exec.Command("cp", "-r", src+"/.", dst)
	if out, err := cp.CombinedOutput(); err != nil {
		tb.Fatalf("copy example: %v\n%s", err, out)
	}
	file := filepath.Join(dst, "pipeline.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	edited := edit(string(b))
	if edited == string(b) {
		tb.Fatal("the pipeline edit changed nothing")
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// watchJobSets records, until ctx ends, the highest status.restarts of the namespace's
// JobSets and every JobSet pod seen.
type observed struct {
	mu       sync.Mutex
	restarts int32
	jobsets  map[string]*jobsetv1.JobSet
	pods     map[string]*corev1.Pod
}

func (l *lab) observe(ctx context.Context) *observed {
	l.tb.Helper()
	o := &observed{jobsets: map[string]*jobsetv1.JobSet{}, pods: map[string]*corev1.Pod{}}
	jw, err := l.js.JobsetV1alpha2().JobSets(l.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		l.tb.Fatal(err)
	}
	pw, err := l.c.Client.CoreV1().Pods(l.ns).Watch(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
	if err != nil {
		l.tb.Fatal(err)
	}
	go func() {
		for ev := range jw.ResultChan() {
			if js, ok := ev.Object.(*jobsetv1.JobSet); ok && ev.Type != watch.Error {
				o.mu.Lock()
				o.restarts = max(o.restarts, js.Status.Restarts)
				o.jobsets[js.Name] = js
				o.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range pw.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Error {
				o.mu.Lock()
				o.pods[p.Name] = p
				o.mu.Unlock()
			}
		}
	}()
	l.tb.Cleanup(func() { jw.Stop(); pw.Stop() })
	return o
}

func launcherSetup(t *testing.T) (*testbed.Cluster, string, context.Context) {
	t.Helper()
	c, ns, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return c, ns, ctx
}

// The example's train step on 2 ranks, through the compiled launcher template.
func TestLauncherTrainsExample(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	a := newAttritionLab(t, c, ns, ctx, filepath.Join(images.repoRoot, "examples", "attrition", "pipeline.yaml"))
	p, logs, _ := a.train(ctx, "train-ok")
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
	}
	for _, want := range []string{"[rank 0] ", "[rank 1] ", "pipectl launch: output model → s3://" + a.bucket + "/" + runsPrefix + "/train-ok/train/model"} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	// Rank 0 published the model and the outputs record to the real MinIO.
	meta := a.s3Cat(ctx, runsPrefix+"/train-ok/train/model.meta.json")
	if !strings.Contains(meta, `"sha256"`) {
		t.Errorf("model.meta.json = %s", meta)
	}
	if rec := a.s3Cat(ctx, runsPrefix+"/train-ok/train/outputs.json"); !strings.Contains(rec, `"type": "Model"`) {
		t.Errorf("outputs.json = %s", rec)
	}
	tm := timings(t, logs)
	if tm["launch-to-pods-created"] <= 0 || tm["terminal-to-exit"] <= 0 {
		t.Errorf("timings %v from the log:\n%s", tm, logs)
	}
	t.Logf("timings: %v", tm)
	a.noJobSetLeft(ctx, 30*time.Second)
}

// One rank failing: the gang restarts once, then the step fails naming the rank.
func TestLauncherRankFailure(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	file := examplePipelineCopy(t, func(s string) string {
		return strings.Replace(s, "    timeout: 15m\n", "    timeout: 15m\n    env:\n      - {name: PIPECTL_EXAMPLE_FAIL_RANK, value: \"1\"}\n", 1)
	})
	a := newAttritionLab(t, c, ns, ctx, file)
	o := a.observe(ctx)
	p, logs, _ := a.train(ctx, "train-fail")
	if p.Status.Phase != corev1.PodFailed {
		t.Errorf("launcher pod %s, want Failed; log:\n%s", p.Status.Phase, logs)
	}
	o.mu.Lock()
	restarts := o.restarts
	o.mu.Unlock()
	if restarts != 1 {
		t.Errorf("JobSet status.restarts reached %d, want 1 (maxRestarts 1)", restarts)
	}
	for _, want := range []string{"gang restart 1: rank 1", "step failed: rank 1", "exited with code 3", "rank 1 failed: exited with code 3"} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil && cs[0].State.Terminated.ExitCode != 3 {
		t.Errorf("launcher exit code %d, want 3 (the failed rank's)", cs[0].State.Terminated.ExitCode)
	}
	a.noJobSetLeft(ctx, 30*time.Second)
}

// SIGTERM to the launcher (its pod deleted) deletes the JobSet and its pods before the
// launcher goes; deleting the launcher pod at once garbage-collects the JobSet it owns.
func TestLauncherStopped(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	a := newAttritionLab(t, c, ns, ctx, filepath.Join(images.repoRoot, "examples", "attrition", "pipeline.yaml"))
	pods := c.Client.CoreV1().Pods(ns)

	start := func(run string) (*corev1.Pod, *jobsetv1.JobSet) {
		a.copyStep(ctx, "base", run, "preprocess")
		// Many epochs: the ranks are still training when the launcher is stopped.
		pod := a.wf.podOf(t, "train", run, map[string]string{"rows": "4000", "epochs": "20000"}, "")
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var js *jobsetv1.JobSet
		poll(t, ctx, "both ranks of "+run+" running", func(ctx context.Context) (bool, error) {
			list, err := a.js.JobsetV1alpha2().JobSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "pipectl.dev/run=" + run})
			if err != nil || len(list.Items) != 1 {
				return false, err
			}
			js = &list.Items[0]
			rp, err := pods.List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey + "=" + js.Name})
			if err != nil {
				return false, err
			}
			running := 0
			for _, p := range rp.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			return running == 2, nil
		})
		if refs := js.OwnerReferences; len(refs) != 1 || refs[0].UID != created.UID || refs[0].Kind != "Pod" {
			t.Errorf("JobSet owner references %+v, want the launcher pod %s", refs, created.UID)
		}
		return created, js
	}

	t.Run("SIGTERM", func(t *testing.T) {
		launcherPod, js := start("stop-term")
		if err := pods.Delete(ctx, launcherPod.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The launcher (not the garbage collector, which waits for the pod to go) deletes
		// the JobSet: it is gone while the launcher pod still terminates.
		began := time.Now()
		deletedFirst := false
		lastState := ""
		poll(t, ctx, "JobSet gone", func(ctx context.Context) (bool, error) {
			cur, err := a.js.JobsetV1alpha2().JobSets(ns).Get(ctx, js.Name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				if cur != nil {
					state := fmt.Sprintf("JobSet deleting=%v finalizers=%v", cur.DeletionTimestamp != nil, cur.Finalizers)
					if rp, err := pods.List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey + "=" + js.Name}); err == nil {
						for _, p := range rp.Items {
							state += fmt.Sprintf("; pod %s %s deleting=%v finalizers=%v", p.Name, p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers)
						}
					}
					if jobs, err := c.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{}); err == nil {
						for _, j := range jobs.Items {
							state += fmt.Sprintf("; job %s deleting=%v finalizers=%v", j.Name, j.DeletionTimestamp != nil, j.Finalizers)
						}
					}
					if state != lastState {
						t.Logf("%s: %s", time.Since(began).Round(time.Millisecond), state)
						lastState = state
					}
				}
				return false, nil
			}
			_, perr := pods.Get(ctx, launcherPod.Name, metav1.GetOptions{})
			deletedFirst = perr == nil
			return true, nil
		})
		t.Logf("JobSet gone %s after SIGTERM", time.Since(began).Round(time.Millisecond))
		if !deletedFirst {
			t.Errorf("the JobSet went after the launcher pod: the launcher did not delete it on SIGTERM")
		}
		rp, err := pods.List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey + "=" + js.Name})
		if err != nil {
			t.Fatal(err)
		}
		if len(rp.Items) != 0 {
			t.Errorf("%d rank pod(s) left when the JobSet was gone (foreground deletion)", len(rp.Items))
		}
		poll(t, ctx, "launcher pod gone", func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, launcherPod.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})

	t.Run("OwnerGC", func(t *testing.T) {
		launcherPod, js := start("stop-gc")
		// Gone at once: the launcher gets no chance to clean up.
		if err := pods.Delete(ctx, launcherPod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, "JobSet and its pods garbage-collected", func(ctx context.Context) (bool, error) {
			_, err := a.js.JobsetV1alpha2().JobSets(ns).Get(ctx, js.Name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
			rp, err := pods.List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey + "=" + js.Name})
			return err == nil && len(rp.Items) == 0, err
		})
	})
}

// shellPipeline is a one-step distributed pipeline running a shell script.
func shellPipeline(tb testing.TB, distributed string) string {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "pipeline.yaml")
	body := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: gpu-shell}
steps:
  - name: gpu
    component:
      metadata: {name: gpu-shell}
      outputs:
        - {name: answer, type: int}
      image: e2e-shell:1
      command: [sh, -c, 'echo "rank $RANK on $(hostname)"; printf 42 > "$0"', "{{outputs.answer.path}}"]
    distributed:
` + distributed
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// A GPU step runs on the GPU node because its plan tolerates the GPU taint:
// the toleration is in the launch spec, and the rank pods get it from there.
func TestLauncherGPUToleration(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, shellPipeline(t, "      nodes: 1\n      resources: {gpu: 1}\n"))
	out := filepath.Join(l.dir, "out")
	pod := wf.podOf(t, "gpu", "gpu-run", nil, out)
	if spec := launchSpec(t, pod); spec["tolerations"] == nil {
		t.Errorf("the compiled launch spec has no GPU toleration")
	}
	o := l.observe(ctx)
	p, logs := l.runPod(ctx, pod)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
	}
	if !strings.Contains(logs, "[rank 0] rank 0 on ") {
		t.Errorf("launcher log lacks the rank's line:\n%s", logs)
	}
	o.mu.Lock()
	var rank *corev1.Pod
	for _, p := range o.pods {
		rank = p
	}
	o.mu.Unlock()
	if rank == nil {
		t.Fatal("no rank pod seen")
	}
	if rank.Spec.NodeName != testbed.GPUNodeName {
		t.Errorf("rank pod ran on %q, want %s", rank.Spec.NodeName, testbed.GPUNodeName)
	}
	tolerated := false
	for _, tol := range rank.Spec.Tolerations {
		if tol.Key == "nvidia.com/gpu" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule {
			tolerated = true
		}
	}
	if !tolerated {
		t.Errorf("rank pod tolerations %+v lack the GPU taint's", rank.Spec.Tolerations)
	}
	// The output parameter reached --output-params (where Argo reads it).
	if b, err := os.ReadFile(filepath.Join(out, "outputs", "answer")); err != nil || string(b) != "42" {
		t.Errorf("output parameter answer = %q, %v; want 42", b, err)
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}

// A gang that cannot fit fails after the startup timeout, naming the reason.
func TestLauncherGangDoesNotFit(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, shellPipeline(t, "      nodes: 2\n      startupTimeout: 15s\n      resources: {gpu: 8}\n"))
	began := time.Now()
	p, logs := l.runPod(ctx, wf.podOf(t, "gpu", "no-fit", nil, ""))
	took := time.Since(began)
	if p.Status.Phase != corev1.PodFailed {
		t.Errorf("launcher pod %s, want Failed; log:\n%s", p.Status.Phase, logs)
	}
	for _, want := range []string{"not every rank was running after 15s", "rank 0 (pod ", "rank 1 (pod ", "Insufficient nvidia.com/gpu", "the JobSet was deleted"} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	if took < 15*time.Second {
		t.Errorf("failed after %s, before the 15s startup timeout", took)
	}
	l.noJobSetLeft(ctx, 10*time.Second)
}

// A Kueue gang is admitted whole or not at all: with quota for one of its two rank
// pods the JobSet stays suspended and no rank pod is created; once the quota fits both,
// Kueue admits it and the step succeeds.
func TestLauncherKueueAdmitsTheWholeGang(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	if err := c.StartKueue(ctx); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cq := "pipectl-" + ns
	create := func(gvr schema.GroupVersionResource, namespace string, obj map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: obj}
		var err error
		if namespace == "" {
			_, err = dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
			t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		} else {
			_, err = dyn.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
		}
	}
	quota := func(cpu string) []any {
		return []any{map[string]any{
			"coveredResources": []any{"cpu"},
			"flavors":          []any{map[string]any{"name": cq, "resources": []any{map[string]any{"name": "cpu", "nominalQuota": cpu}}}},
		}}
	}
	create(testbed.KueueResourceFlavors, "", map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": map[string]any{"name": cq}})
	create(testbed.KueueClusterQueues, "", map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": cq},
		"spec": map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": quota("600m")}})
	create(testbed.KueueLocalQueues, ns, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": map[string]any{"name": "training", "namespace": ns},
		"spec": map[string]any{"clusterQueue": cq}})

	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, shellPipeline(t, "      nodes: 2\n      resources: {cpu: 500m}\n      gang: {kueue: {queue: training}}\n"))
	o := l.observe(ctx)
	pod := wf.podOf(t, "gpu", "kueue-run", nil, "")
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Kueue takes the suspended JobSet's workload and, lacking quota for both pods,
	// admits neither.
	poll(t, ctx, "a pending Kueue workload", func(ctx context.Context) (bool, error) {
		list, err := dyn.Resource(testbed.KueueWorkloads).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		for _, cond := range conditions(list.Items[0].Object) {
			if cond["type"] == "QuotaReserved" && cond["status"] == "False" && cond["reason"] == "Pending" {
				return true, nil
			}
		}
		return false, nil
	})
	time.Sleep(2 * time.Second) // a gang admitted in part would have pods by now
	o.mu.Lock()
	npods := len(o.pods)
	var suspended bool
	for _, js := range o.jobsets {
		suspended = js.Spec.Suspend != nil && *js.Spec.Suspend
	}
	o.mu.Unlock()
	if npods != 0 || !suspended {
		t.Fatalf("with quota for one rank: %d rank pods, JobSet suspended %v; want none and true", npods, suspended)
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"resourceGroups": quota("2")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(testbed.KueueClusterQueues).Patch(ctx, cq, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	p := l.waitPodEnded(ctx, pod.Name)
	logs := l.logs(ctx, pod.Name)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
	}
	for _, want := range []string{"(JobSet suspended: waiting for admission by Kueue queue training)", "[rank 0] rank 0 on ", "[rank 1] rank 1 on "} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}

// A coscheduling gang is bound whole or not at all. Two rank pods of one GPU each run
// together under the scheduler-plugins scheduler; two that need 3 of the GPU node's 4
// GPUs each are never bound one without the other (the default scheduler would bind the
// first), and the launcher fails after its startup timeout.
func TestLauncherPodGroupGang(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	if err := c.StartCoscheduling(ctx); err != nil {
		t.Fatal(err)
	}
	l := newLab(t, c, ns, ctx)
	o := l.observe(ctx)
	gang := "      gang: {podGroup: {scheduler: coscheduling}}\n"

	wf := l.compile(ctx, shellPipeline(t, "      nodes: 2\n      resources: {gpu: 1}\n"+gang))
	p, logs := l.runPod(ctx, wf.podOf(t, "gpu", "pg-fit", nil, ""))
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
	}
	for _, want := range []string{"created PodGroup " + ns + "/pg-fit-gpu", "[rank 0] rank 0 on ", "[rank 1] rank 1 on "} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	o.mu.Lock()
	for name, pod := range o.pods {
		if pod.Spec.SchedulerName != testbed.CoschedulingSchedulerName || pod.Labels["scheduling.x-k8s.io/pod-group"] != "pg-fit-gpu" || pod.Spec.NodeName == "" {
			t.Errorf("rank pod %s: scheduler %q, pod group %q, node %q", name, pod.Spec.SchedulerName, pod.Labels["scheduling.x-k8s.io/pod-group"], pod.Spec.NodeName)
		}
	}
	o.mu.Unlock()
	l.noJobSetLeft(ctx, 30*time.Second)

	wf = l.compile(ctx, shellPipeline(t, "      nodes: 2\n      startupTimeout: 15s\n      resources: {gpu: 3}\n"+gang))
	p, logs = l.runPod(ctx, wf.podOf(t, "gpu", "pg-nofit", nil, ""))
	if p.Status.Phase != corev1.PodFailed || !strings.Contains(logs, "not every rank was running after 15s") {
		t.Errorf("launcher pod %s, want Failed after the startup timeout; log:\n%s", p.Status.Phase, logs)
	}
	o.mu.Lock()
	seen := 0
	for name, pod := range o.pods {
		if strings.HasPrefix(name, "pg-nofit-") {
			seen++
			if pod.Spec.NodeName != "" {
				t.Errorf("rank pod %s was bound to %s without its gang", name, pod.Spec.NodeName)
			}
		}
	}
	o.mu.Unlock()
	if seen != 2 {
		t.Errorf("saw %d rank pods of the gang that does not fit, want 2", seen)
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}

// conditions returns status.conditions of an unstructured object.
func conditions(obj map[string]any) []map[string]any {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var out []map[string]any
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// BenchmarkLauncherTrain runs the example's train step (2 ranks, one epoch) through the
// launcher pod b.N times and reports the launcher's own timings: from the JobSet's
// creation until every rank pod existed, and from the JobSet turning terminal until the
// launcher exited (goal < 1 s). Run with
//
//	go test -count=1 -run '^$' -bench BenchmarkLauncherTrain -benchtime 3x .
func BenchmarkLauncherTrain(b *testing.B) {
	if cluster == nil {
		b.Skip("no test bed (-short)")
	}
	cluster.DumpOnFailure(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ns := cluster.Namespace(b)
	a := newAttritionLab(b, cluster, ns, ctx, filepath.Join(images.repoRoot, "examples", "attrition", "pipeline.yaml"))
	var created, exit, worstExit time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := fmt.Sprintf("bench-%d", i)
		p, logs, _ := a.train(ctx, run)
		if p.Status.Phase != corev1.PodSucceeded {
			b.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
		}
		tm := timings(b, logs)
		c, e := tm["launch-to-pods-created"], tm["terminal-to-exit"]
		if c <= 0 || e <= 0 {
			b.Fatalf("no timing lines in the launcher's log:\n%s", logs)
		}
		b.Logf("%s: launch-to-pods-created=%s terminal-to-exit=%s", run, c, e)
		created += c
		exit += e
		worstExit = max(worstExit, e)
	}
	b.StopTimer()
	b.ReportMetric(float64(created.Milliseconds())/float64(b.N), "ms-to-pods-created/op")
	b.ReportMetric(float64(exit.Microseconds())/1000/float64(b.N), "ms-terminal-to-exit/op")
	b.ReportMetric(float64(worstExit.Microseconds())/1000, "ms-worst-terminal-to-exit")
}
