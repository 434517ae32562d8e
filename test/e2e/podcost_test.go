package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/components/record"
)

// chainSteps is the length of the chain BenchmarkPodCost runs;
// podCostPairs how many times each iteration runs it both ways, alternated
// (-benchtime 1x: Go runs a benchmark once with b.N = 1 before b.N = N).
const (
	chainSteps   = 10
	podCostPairs = 3
)

// chainPipeline is a chain of n steps, each `sh -c true` in the shell image,
// each after the one before.
func chainPipeline(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: chain}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: s%d\n    component: {metadata: {name: noop}, image: e2e-shell:1, command: [sh, -c, 'true']}\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "    after: [s%d]\n", i-1)
		}
	}
	return b.String()
}

// podTimes are when the benchmark saw a pod reach each of its states (the
// watch's clock: the API's own timestamps are whole seconds).
type podTimes struct {
	workflow, step                                        string
	created, scheduled, initialized, running, ended, done time.Time
}

// podClock watches the pods of a namespace and keeps, by pod, when each
// state was first seen.
type podClock struct {
	mu   sync.Mutex
	pods map[string]*podTimes
}

func watchPodClock(tb testing.TB, ctx context.Context, a *argoLab) *podClock {
	tb.Helper()
	w, err := a.c.Client.CoreV1().Pods(a.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	pc := &podClock{pods: map[string]*podTimes{}}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				pc.see(p, time.Now())
			}
		}
	}()
	tb.Cleanup(w.Stop)
	return pc
}

func (pc *podClock) see(p *corev1.Pod, now time.Time) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	t := pc.pods[p.Name]
	if t == nil {
		node := p.Annotations["workflows.argoproj.io/node-name"]
		t = &podTimes{workflow: p.Labels["workflows.argoproj.io/workflow"], step: node[strings.LastIndex(node, ".")+1:], created: now}
		pc.pods[p.Name] = t
	}
	stamp := func(at *time.Time, reached bool) {
		if reached && at.IsZero() {
			*at = now
		}
	}
	stamp(&t.scheduled, p.Spec.NodeName != "")
	for _, c := range p.Status.Conditions {
		stamp(&t.initialized, c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue)
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == "main" {
			stamp(&t.running, c.State.Running != nil || c.State.Terminated != nil)
			stamp(&t.ended, c.State.Terminated != nil)
		}
	}
	stamp(&t.done, p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
}

// of returns the pods of workflow wf by step.
func (pc *podClock) of(wf string) map[string]podTimes {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	got := map[string]podTimes{}
	for _, t := range pc.pods {
		if t.workflow == wf {
			got[t.step] = *t
		}
	}
	return got
}

// phases collects durations by phase name, in the order names were first added.
type phases struct {
	names []string
	by    map[string][]time.Duration
}

func (ph *phases) add(name string, from, to time.Time) {
	if from.IsZero() || to.IsZero() {
		return
	}
	if ph.by == nil {
		ph.by = map[string][]time.Duration{}
	}
	if _, ok := ph.by[name]; !ok {
		ph.names = append(ph.names, name)
	}
	ph.by[name] = append(ph.by[name], to.Sub(from))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkPodCost is the cost of a pod (issue "The cost of a pod"): a chain
// of 10 trivial steps through `pipectl run --on argo --no-cache` against the
// same chain written by hand as a plain Argo Workflow (one container per
// task, the same image, `sh -c true`), alternated, each timed by the
// workflow's own startedAt..finishedAt. It reports the ratio (goal ≤ 1.10)
// and the median of each phase of a step's pod: created → scheduled → init
// containers done → exec started → inputs ready → program started → program
// ended → outputs published → main container ended → pod done, and the gap
// from a pod done to the next step's pod. The pod states are those the
// benchmark watches; pipectl's own from the timing of each step's inputs
// record. Run with
//
//	go test -count=1 -run '^$' -bench BenchmarkPodCost -benchtime 1x .
func BenchmarkPodCost(b *testing.B) {
	if cluster == nil {
		b.Skip("no test bed (-short)")
	}
	if images.launcherErr != nil {
		b.Fatalf("images: %v", images.launcherErr)
	}
	cluster.DumpOnFailure(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	a := prepareArgoLab(b, ctx, cluster, cluster.Namespace(b))
	file := writePipeline(b, chainPipeline(chainSteps))
	plain := a.plainChain(ctx, file)
	clock := watchPodClock(b, ctx, a)
	s3, err := a.c.S3()
	if err != nil {
		b.Fatal(err)
	}
	var ours, theirs time.Duration
	var ourPhases, theirPhases phases
	b.ResetTimer()
	for i := 0; i < b.N*podCostPairs; i++ {
		run := a.runArgoOK(b, ctx, file, nil, nil, "--no-cache")
		took := a.workflowTook(ctx, run)
		a.stepPhases(ctx, &ourPhases, clock.of(run), func(step string) *record.StepTiming { return a.stepTiming(ctx, s3, run, step) })
		name := a.runWorkflow(ctx, plain)
		tookPlain := a.workflowTook(ctx, name)
		a.stepPhases(ctx, &theirPhases, clock.of(name), nil)
		b.Logf("pipectl %s %s, plain Argo %s %s (%.2f×)", run, took, name, tookPlain, took.Seconds()/tookPlain.Seconds())
		ours += took
		theirs += tookPlain
	}
	b.StopTimer()
	b.Logf("per-step phase medians (pipectl | plain Argo), %d steps × %d runs each:", chainSteps, b.N*podCostPairs)
	cell := func(ph *phases, n string) string {
		if ds := ph.by[n]; len(ds) > 0 {
			return median(ds).Round(time.Millisecond).String()
		}
		return "-"
	}
	names := slices.Clone(ourPhases.names)
	for _, n := range theirPhases.names {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		b.Logf("  %-40s %8s | %8s", n, cell(&ourPhases, n), cell(&theirPhases, n))
	}
	runs := float64(b.N * podCostPairs)
	b.ReportMetric(ours.Seconds()/runs, "s-pipectl/op")
	b.ReportMetric(theirs.Seconds()/runs, "s-plain-argo/op")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "ratio")
}

// stepPhases adds the phases of each step's pod of a run to ph; timing,
// when set, gives pipectl's own phases of a step.
func (a *argoLab) stepPhases(ctx context.Context, ph *phases, pods map[string]podTimes, timing func(step string) *record.StepTiming) {
	for i := range chainSteps {
		step := fmt.Sprintf("s%d", i)
		p, ok := pods[step]
		if !ok {
			a.t.Fatalf("no pod seen for step %s (%v)", step, pods)
		}
		ph.add("pod created → scheduled", p.created, p.scheduled)
		ph.add("scheduled → init containers done", p.scheduled, p.initialized)
		if timing == nil {
			ph.add("init done → main running", p.initialized, p.running)
			ph.add("main running → main ended", p.running, p.ended)
		} else {
			tm := timing(step)
			ph.add("init done → main running", p.initialized, p.running)
			ph.add("init done → exec started", p.initialized, tm.ExecStarted)
			ph.add("exec started → inputs ready", tm.ExecStarted, tm.InputsReady)
			ph.add("inputs ready → program started", tm.InputsReady, tm.ProgramStarted)
			ph.add("program started → program ended", tm.ProgramStarted, tm.ProgramEnded)
			ph.add("program ended → outputs published", tm.ProgramEnded, tm.OutputsPublished)
			ph.add("outputs published → main ended", tm.OutputsPublished, p.ended)
			ph.add("main running → main ended", p.running, p.ended)
		}
		ph.add("main ended → pod done", p.ended, p.done)
		ph.add("pod created → pod done", p.created, p.done)
		if next, ok := pods[fmt.Sprintf("s%d", i+1)]; ok {
			ph.add("pod done → next step's pod created", p.done, next.created)
		}
	}
}

// stepTiming reads the timing of a step's inputs record.
func (a *argoLab) stepTiming(ctx context.Context, s3 *minio.Client, run, step string) *record.StepTiming {
	obj, err := s3.GetObject(ctx, a.bucket, path.Join(runsPrefix, record.InputsKey(run, step)), minio.GetObjectOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	defer obj.Close()
	body, err := io.ReadAll(obj)
	if err != nil {
		a.t.Fatalf("inputs record of %s/%s: %v", run, step, err)
	}
	var rec record.StepInputs
	if err := json.Unmarshal(body, &rec); err != nil || rec.Timing == nil {
		a.t.Fatalf("inputs record of %s/%s has no timing (%v): %s", run, step, err, body)
	}
	return rec.Timing
}

// plainChain compiles file with the flags of runArgo and returns the same
// chain as a plain Argo Workflow: each task's pod runs `sh -c true` in the
// step's image (pinned as pipectl pins it), with no init container of
// pipectl's, no volume and no env.
func (a *argoLab) plainChain(ctx context.Context, file string) *unstructured.Unstructured {
	args := a.argoArgs(file)
	args = append([]string{"compile", file}, args[4:]...) // run FILE --on argo
	out, errOut, code := a.pipectl(ctx, args...)
	if code != 0 {
		a.t.Fatalf("pipectl %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
		a.t.Fatal(err)
	}
	wf := &unstructured.Unstructured{Object: obj}
	wf.SetGenerateName("plain-chain-")
	wf.SetLabels(nil)
	wf.SetAnnotations(nil)
	unstructured.RemoveNestedField(wf.Object, "spec", "volumes")
	unstructured.RemoveNestedField(wf.Object, "spec", "podMetadata")
	unstructured.RemoveNestedField(wf.Object, "spec", "workflowMetadata")
	templates, _, _ := unstructured.NestedSlice(wf.Object, "spec", "templates")
	plain := 0
	for _, t := range templates {
		tm := t.(map[string]any)
		c, ok := tm["container"].(map[string]any)
		if !ok {
			continue
		}
		tm["container"] = map[string]any{"image": c["image"], "command": []any{"sh", "-c", "true"}}
		delete(tm, "initContainers")
		plain++
	}
	if plain != 1 {
		a.t.Fatalf("the compiled chain has %d container templates, want 1:\n%s", plain, out)
	}
	if err := unstructured.SetNestedSlice(wf.Object, templates, "spec", "templates"); err != nil {
		a.t.Fatal(err)
	}
	return wf
}

// runWorkflow creates wf and waits until it succeeded; it returns its name.
func (a *argoLab) runWorkflow(ctx context.Context, wf *unstructured.Unstructured) string {
	dyn, err := dynamic.NewForConfig(a.c.Config)
	if err != nil {
		a.t.Fatal(err)
	}
	wfs := dyn.Resource(workflowsGVR).Namespace(a.ns)
	created, err := wfs.Create(ctx, wf.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	name := created.GetName()
	var phase string
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := wfs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase, _, _ = unstructured.NestedString(got.Object, "status", "phase")
		return phase == "Succeeded" || phase == "Failed" || phase == "Error", nil
	})
	if err != nil || phase != "Succeeded" {
		a.t.Fatalf("plain workflow %s: %s %v", name, phase, err)
	}
	return name
}

// workflowTook is the workflow's own startedAt..finishedAt.
func (a *argoLab) workflowTook(ctx context.Context, name string) time.Duration {
	dyn, err := dynamic.NewForConfig(a.c.Config)
	if err != nil {
		a.t.Fatal(err)
	}
	got, err := dyn.Resource(workflowsGVR).Namespace(a.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	var at [2]time.Time
	for i, f := range []string{"startedAt", "finishedAt"} {
		s, _, _ := unstructured.NestedString(got.Object, "status", f)
		if at[i], err = time.Parse(time.RFC3339, s); err != nil {
			a.t.Fatalf("workflow %s status.%s: %v", name, f, err)
		}
	}
	return at[1].Sub(at[0])
}
