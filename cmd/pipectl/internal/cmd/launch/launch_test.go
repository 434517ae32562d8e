package launch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetfake "sigs.k8s.io/jobset/client-go/clientset/versioned/fake"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

const example = "../../../../../examples/attrition/pipeline.yaml"

func runLaunch(t *testing.T, f *cmdutil.Factory, prepare func(*Options), args ...string) error {
	t.Helper()
	cmd := NewCmdLaunch(f, func(o *Options) error {
		if prepare != nil {
			prepare(o)
		}
		return launchRun(o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

func testFactory(t *testing.T) (*cmdutil.Factory, *strings.Builder, *componentstest.Buffer) {
	ios, _, _, _ := podutil.Test()
	out, errOut := &strings.Builder{}, &componentstest.Buffer{}
	ios.Out, ios.ErrOut = out, errOut
	env := map[string]string{}
	return &cmdutil.Factory{IOStreams: ios, ArtifactsRoot: t.TempDir(), Version: "test", Getenv: func(k string) string { return env[k] }}, out, errOut
}

func TestDryRunExample(t *testing.T) {
	f, out, _ := testFactory(t)
	f.ArtifactsRoot = "s3://ml/runs"
	if err := runLaunch(t, f, nil, "--dry-run", "-f", example, "--step", "train", "-p", "epochs=5", "-o", "json", "-n", "ml", "--run", "attrition-x1"); err != nil {
		t.Fatal(err)
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	if js.Kind != "JobSet" || js.Name != "attrition-x1-train" || js.Namespace != "ml" {
		t.Errorf("JobSet %s %s/%s", js.Kind, js.Namespace, js.Name)
	}
	if js.Labels[wire.LabelPipeline] != "attrition" || js.Labels[wire.LabelStep] != "train" || js.Labels[wire.LabelRun] != "attrition-x1" {
		t.Errorf("labels %v", js.Labels)
	}
	rj := js.Spec.ReplicatedJobs[0]
	if *rj.Template.Spec.Completions != 2 || *rj.Template.Spec.Parallelism != 2 || js.Spec.FailurePolicy.MaxRestarts != 1 {
		t.Errorf("completions %d parallelism %d maxRestarts %d, want 2 2 1", *rj.Template.Spec.Completions, *rj.Template.Spec.Parallelism, js.Spec.FailurePolicy.MaxRestarts)
	}
	c := rj.Template.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--gang", "--run=attrition-x1", "--param=epochs=5", "--param=lr=0.01"} {
		if !strings.Contains(args, want) {
			t.Errorf("rank args lack %q: %s", want, args)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["MASTER_ADDR"] != "attrition-x1-train-rank-0-0.attrition-x1-train" || env["WORLD_SIZE"] != "2" ||
		env["RANK"] != "metadata.annotations['batch.kubernetes.io/job-completion-index']" || env["PIPECTL_ARTIFACTS"] != "s3://ml/runs" {
		t.Errorf("rank env %v", env)
	}
	if strings.Contains(out.String(), "status") {
		t.Errorf("the dry run prints a status")
	}
}

// TestDryRunCheckpoint: the rank pods keep the step's checkpoint as it
// says (distributed.checkpoint's keep and every) and resume from the run
// the launcher is told (--resume-from).
func TestDryRunCheckpoint(t *testing.T) {
	f, out, _ := testFactory(t)
	file := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(file, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: g}
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: t}
      image: x:1
      command: [python3, t.py]
    distributed: {nodes: 2, checkpoint: {keep: 3, every: 30s}}
`), 0o644)
	if err := runLaunch(t, f, nil, "--dry-run", "-f", file, "--step", "train", "--resume-from", "g-old", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	args := strings.Join(js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Args, " ")
	if want := "--checkpoint-keep=3 --checkpoint-every=30s --resume-from=g-old"; !strings.Contains(args, want) {
		t.Errorf("rank args lack %q: %s", want, args)
	}
}

// TestDryRunGPURanks: with GPUs per rank pod and no procsPerNode, each pod
// runs a rank per GPU; /dev/shm is memory-backed, half the memory limit.
func TestDryRunGPURanks(t *testing.T) {
	f, out, _ := testFactory(t)
	file := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(file, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: g}
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: t}
      image: x:1
      command: [python3, t.py]
    distributed: {nodes: 2, resources: {memory: 16Gi, gpu: 4}}
`), 0o644)
	if err := runLaunch(t, f, nil, "--dry-run", "-f", file, "--step", "train", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["LOCAL_WORLD_SIZE"] != "4" || env["WORLD_SIZE"] != "8" {
		t.Errorf("LOCAL_WORLD_SIZE %q WORLD_SIZE %q, want 4 and 8", env["LOCAL_WORLD_SIZE"], env["WORLD_SIZE"])
	}
	var shm *corev1.EmptyDirVolumeSource
	for _, v := range pod.Volumes {
		if v.Name == "dshm" {
			shm = v.EmptyDir
		}
	}
	if shm == nil || shm.Medium != corev1.StorageMediumMemory || shm.SizeLimit == nil || shm.SizeLimit.String() != "8Gi" {
		t.Errorf("/dev/shm volume %+v, want memory-backed, 8Gi", shm)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == "dshm" && m.MountPath == "/dev/shm")
	}
	if !mounted {
		t.Errorf("rank container mounts %+v, want dshm at /dev/shm", pod.Containers[0].VolumeMounts)
	}
}

func TestDryRunNotDistributed(t *testing.T) {
	f, _, _ := testFactory(t)
	err := runLaunch(t, f, nil, "--dry-run", "-f", example, "--step", "evaluate")
	if err == nil || !strings.Contains(err.Error(), "not distributed") {
		t.Fatalf("err = %v", err)
	}
}

// cluster is a fake API server; watches signal when they open.
type cluster struct {
	kube    *kubefake.Clientset
	jobsets *jobsetfake.Clientset
	opened  chan struct{}
}

func newCluster() *cluster {
	c := &cluster{kube: kubefake.NewClientset(), jobsets: jobsetfake.NewSimpleClientset(), opened: make(chan struct{}, 10)}
	c.jobsets.PrependWatchReactor("jobsets", func(k8stesting.Action) (bool, watch.Interface, error) {
		c.opened <- struct{}{}
		return false, nil, nil
	})
	return c
}

// finish waits for the launcher's JobSet watch, runs publish (rank 0's
// work) and marks the JobSet completed.
func (c *cluster) finish(t *testing.T, publish func()) {
	select {
	case <-c.opened:
	case <-time.After(10 * time.Second):
		t.Error("no JobSet watch")
		return
	}
	time.Sleep(20 * time.Millisecond)
	if publish != nil {
		publish()
	}
	list, err := c.jobsets.JobsetV1alpha2().JobSets("ml").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("JobSets %v, %v", list, err)
		return
	}
	js := list.Items[0]
	js.Status.Conditions = []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue}}
	if _, err := c.jobsets.JobsetV1alpha2().JobSets("ml").UpdateStatus(context.Background(), &js, metav1.UpdateOptions{}); err != nil {
		t.Error(err)
	}
}

// launcherArgs are the flags the compiled launcher pod of the example's
// train step gets.
func launcherArgs(t *testing.T, f *cmdutil.Factory, run string) []string {
	t.Helper()
	opts := &Options{Factory: f, Args: wire.Args{Run: run, Step: "train"}, File: example, Image: "pipectl:test"}
	e, err := planned(opts)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--run=" + e.Run, "--component=" + e.Component, "--step=" + e.Step, "--distributed=" + e.Distributed, "-n", "ml"}
	for _, p := range e.Params {
		args = append(args, "--param="+p)
	}
	return args
}

func withCluster(c *cluster) func(*Options) {
	return func(o *Options) {
		o.Clients = func() (launcher.Clients, string, error) {
			return launcher.Clients{Kube: c.kube, JobSets: c.jobsets}, "", nil
		}
		o.RetryInterval = 10 * time.Millisecond
	}
}

// TestLaunchMissingOutput: the JobSet completed but rank 0's model is not
// in the store: the step fails, naming it.
func TestLaunchMissingOutput(t *testing.T) {
	f, _, errOut := testFactory(t)
	c := newCluster()
	go c.finish(t, nil)
	err := runLaunch(t, f, withCluster(c), launcherArgs(t, f, "run-1")...)
	var me *launcher.MissingOutputsError
	if !errors.As(err, &me) || len(me.Outputs) != 1 || me.Outputs[0] != "model" {
		t.Fatalf("err = %v, want the model missing\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "timing terminal-to-exit=") {
		t.Errorf("no terminal-to-exit timing:\n%s", errOut.String())
	}
}

// TestLaunchSucceeds: rank 0 published the model and the step's outputs
// record; the launcher finds it.
func TestLaunchSucceeds(t *testing.T) {
	f, _, errOut := testFactory(t)
	c := newCluster()
	go c.finish(t, func() {
		store, err := f.Store(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		src := filepath.Join(t.TempDir(), "model")
		os.WriteFile(src, []byte("weights"), 0o644)
		key := record.OutputKey("run-2", "train", "model")
		meta, err := artifacts.Publish(context.Background(), store, key, src, artifacts.Metadata{Type: "Model"})
		if err != nil {
			t.Error(err)
		}
		out := record.OutputRecord{Name: "model", Type: "Model", URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}
		if err := recordstore.WriteOutputs(context.Background(), store, "run-2", "train", []record.OutputRecord{out}); err != nil {
			t.Error(err)
		}
	})
	if err := runLaunch(t, f, withCluster(c), launcherArgs(t, f, "run-2")...); err != nil {
		t.Fatalf("launch: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "output model → ") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// publish stores content as output of step in run, with the step's outputs
// record, as rank 0 (or exec) does.
func publish(t *testing.T, store artifacts.Store, run, step, output, typ, content string) record.OutputRecord {
	t.Helper()
	src := filepath.Join(t.TempDir(), output)
	os.WriteFile(src, []byte(content), 0o644)
	key := record.OutputKey(run, step, output)
	meta, err := artifacts.Publish(context.Background(), store, key, src, artifacts.Metadata{Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	out := record.OutputRecord{Name: output, Type: typ, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}
	if err := recordstore.WriteOutputs(context.Background(), store, run, step, []record.OutputRecord{out}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLaunchCached: with --cache on, a second run of the train step with
// the same inputs creates no JobSet; its outputs record names the first
// run's model, cached from it. With the input data changed, or with --cache
// refresh, the step runs again; a cache entry whose model is gone is not used.
func TestLaunchCached(t *testing.T) {
	f, _, errOut := testFactory(t)
	ctx := context.Background()
	store, err := f.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// launch runs the train step of run with --cache mode; with a cluster
	// that completes the JobSet after publishing run's model when wantJobSet.
	launch := func(run, mode string, wantJobSet bool) {
		t.Helper()
		c := newCluster()
		done := make(chan struct{})
		if wantJobSet {
			go func() {
				defer close(done)
				c.finish(t, func() { publish(t, store, run, "train", "model", "Model", "weights of "+run) })
			}()
		} else {
			close(done)
		}
		before := len(errOut.String())
		if err := runLaunch(t, f, withCluster(c), append(launcherArgs(t, f, run), "--cache="+mode)...); err != nil {
			t.Fatalf("launch %s: %v\n%s", run, err, errOut.String()[before:])
		}
		<-done
		created := slices.ContainsFunc(c.jobsets.Actions(), func(a k8stesting.Action) bool { return a.GetVerb() == "create" })
		if created != wantJobSet {
			t.Errorf("run %s --cache=%s: JobSet created %v, want %v\n%s", run, mode, created, wantJobSet, errOut.String()[before:])
		}
	}
	cachedFrom := func(run string) string {
		t.Helper()
		rec, err := recordstore.ReadStepOutputs(ctx, store, run, "train")
		if err != nil {
			t.Fatal(err)
		}
		return rec.CachedFrom
	}

	publish(t, store, "r1", "preprocess", "train", "Dataset", "rows")
	launch("r1", "on", true)
	publish(t, store, "r2", "preprocess", "train", "Dataset", "rows")
	launch("r2", "on", false)
	if got := cachedFrom("r2"); got != "r1" {
		t.Errorf("r2's train outputs record cachedFrom %q, want r1", got)
	}
	r1, _ := recordstore.ReadOutputs(ctx, store, "r1", "train")
	r2, _ := recordstore.ReadOutputs(ctx, store, "r2", "train")
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("r2's outputs are not r1's (-want +got):\n%s", diff)
	}
	if !strings.Contains(errOut.String(), "cached: reusing the outputs of step train of run r1") {
		t.Errorf("stderr does not say cached:\n%s", errOut.String())
	}

	// Other data: a miss.
	publish(t, store, "r3", "preprocess", "train", "Dataset", "other rows")
	launch("r3", "on", true)
	if got := cachedFrom("r3"); got != "" {
		t.Errorf("r3 cachedFrom %q, want it run", got)
	}
	// --cache refresh runs the step (and records it).
	publish(t, store, "r4", "preprocess", "train", "Dataset", "rows")
	launch("r4", "refresh", true)
	// r4 recorded the entry anew: with r4's model gone, the entry is not used.
	if err := store.Delete(ctx, record.OutputKey("r4", "train", "model")); err != nil {
		t.Fatal(err)
	}
	publish(t, store, "r5", "preprocess", "train", "Dataset", "rows")
	launch("r5", "on", true)
	if got := cachedFrom("r5"); got != "" {
		t.Errorf("r5 cachedFrom %q, want it run (the cached model is gone)", got)
	}
}

const sweep = "../../../../../examples/sweep/pipeline.yaml"

// TestDryRunLoopIteration: each iteration of a distributed loop step is a
// gang of its own: a JobSet named after the iteration, labelled with the
// step and the index, whose ranks run that iteration.
func TestDryRunLoopIteration(t *testing.T) {
	f, out, _ := testFactory(t)
	if err := runLaunch(t, f, nil, "--dry-run", "-f", sweep, "--step", "trial", "--iteration", "2", "-o", "json", "--run", "sweep-x1"); err != nil {
		t.Fatal(err)
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	if js.Name != "sweep-x1-trial-2" || js.Labels[wire.LabelStep] != "trial" || js.Labels[wire.LabelIteration] != "2" {
		t.Errorf("JobSet %s labels %v, want sweep-x1-trial-2 labelled step trial iteration 2", js.Name, js.Labels)
	}
	args := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--iteration=2") || !slices.Contains(args, "--param=lrs=[0.1,0.03,0.01]") {
		t.Errorf("rank args %q lack --iteration=2 and the items' param", args)
	}
	for _, args := range [][]string{
		{"-f", sweep, "--step", "trial"},
		{"-f", example, "--step", "train", "--iteration", "0"},
	} {
		err := runLaunch(t, f, nil, append([]string{"--dry-run"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--iteration") {
			t.Errorf("%v: err = %v, want one naming --iteration", args, err)
		}
	}
}

// TestLaunchLoopIteration: the launcher of iteration i creates the JobSet
// of STEP[i], finds rank 0's outputs under STEP[i], and caches per
// iteration: a later run reuses iteration 1 (same item, same data) and runs
// iteration 0 when its item changed.
func TestLaunchLoopIteration(t *testing.T) {
	f, _, errOut := testFactory(t)
	ctx := context.Background()
	store, err := f.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	args := func(run string, iteration int, lrs string) []string {
		opts := &Options{Factory: f, Args: wire.Args{Run: run, Step: "trial", Iteration: strconv.Itoa(iteration)}, File: sweep, Image: "pipectl:test"}
		e, err := planned(opts)
		if err != nil {
			t.Fatal(err)
		}
		dist := e.Distributed
		e.Params = slices.DeleteFunc(e.Params, func(p string) bool { return strings.HasPrefix(p, "lrs=") })
		e.Params = append(e.Params, wire.Value("lrs", lrs))
		out := []string{"--run=" + run, "--component=" + e.Component, "--step=" + e.Step, "--distributed=" + dist, "-n", "ml",
			"--iteration=" + strconv.Itoa(iteration), "--cache=on", "--output-params=" + t.TempDir()}
		for _, p := range e.Params {
			out = append(out, "--param="+p)
		}
		return out
	}
	// launch runs an iteration and says whether it created a JobSet, and which.
	launch := func(run string, iteration int, lrs string, wantJobSet bool) {
		t.Helper()
		c := newCluster()
		done := make(chan struct{})
		name := pipelineIteration("trial", iteration)
		if wantJobSet {
			go func() {
				defer close(done)
				c.finish(t, func() { publish(t, store, run, name, "model", "Model", "weights of "+run+" "+name) })
			}()
		} else {
			close(done)
		}
		before := len(errOut.String())
		if err := runLaunch(t, f, withCluster(c), args(run, iteration, lrs)...); err != nil {
			t.Fatalf("launch %s %s: %v\n%s", run, name, err, errOut.String()[before:])
		}
		<-done
		var created []string
		for _, a := range c.jobsets.Actions() {
			if ca, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "create" {
				created = append(created, ca.GetObject().(*jobsetv1alpha2.JobSet).Name)
			}
		}
		want := []string(nil)
		if wantJobSet {
			want = []string{run + "-trial-" + strconv.Itoa(iteration)}
		}
		if diff := cmp.Diff(want, created); diff != "" {
			t.Errorf("%s %s: JobSets created (-want +got):\n%s\n%s", run, name, diff, errOut.String()[before:])
		}
	}
	publish(t, store, "r1", "preprocess", "train", "Dataset", "rows")
	launch("r1", 0, "[0.1, 0.03]", true)
	launch("r1", 1, "[0.1, 0.03]", true)
	if _, err := recordstore.ReadOutputs(ctx, store, "r1", "trial[1]"); err != nil {
		t.Errorf("no outputs record of trial[1]: %v", err)
	}
	var log strings.Builder
	if err := artifacts.Copy(ctx, store, record.LogKey("r1", "trial[1]"), &log, ""); err != nil || !strings.Contains(log.String(), "created JobSet ml/r1-trial-1") {
		t.Errorf("the log kept for trial[1] (%v):\n%s", err, log.String())
	}
	publish(t, store, "r2", "preprocess", "train", "Dataset", "rows")
	launch("r2", 1, "[0.3, 0.03]", false) // same item 0.03: reused
	launch("r2", 0, "[0.3, 0.03]", true)  // item 0.3: runs
	rec, err := recordstore.ReadStepOutputs(ctx, store, "r2", "trial[1]")
	if err != nil || rec.CachedFrom != "r1" {
		t.Errorf("r2's trial[1] outputs record: cachedFrom %q (%v), want r1", rec.CachedFrom, err)
	}
	if !strings.Contains(errOut.String(), "step trial[1] cached: reusing the outputs of step trial[1] of run r1") {
		t.Errorf("stderr does not say trial[1] is cached:\n%s", errOut.String())
	}
}

func pipelineIteration(step string, i int) string { return step + "[" + strconv.Itoa(i) + "]" }
