package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"
)

// createdObjects records the names of the JobSets and pods created in a
// namespace while it watches, and how many of the pods are JobSet pods.
type createdObjects struct {
	mu         sync.Mutex
	jobsets    []string
	pods       []string
	jobsetPods int
}

func (c *createdObjects) count() (jobsets, pods, jobsetPods int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.jobsets), len(c.pods), c.jobsetPods
}

// watchCreated records every JobSet and pod added to the lab's namespace
// until ctx ends.
func (a *argoLab) watchCreated(ctx context.Context) *createdObjects {
	a.t.Helper()
	js, err := jobsetclient.NewForConfig(a.c.Config)
	if err != nil {
		a.t.Fatal(err)
	}
	jw, err := js.JobsetV1alpha2().JobSets(a.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	pw, err := a.c.Client.CoreV1().Pods(a.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		a.t.Fatal(err)
	}
	c := &createdObjects{}
	go func() {
		for ev := range jw.ResultChan() {
			if o, ok := ev.Object.(*jobsetv1.JobSet); ok && ev.Type == watch.Added {
				c.mu.Lock()
				c.jobsets = append(c.jobsets, o.Name)
				c.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range pw.ResultChan() {
			if o, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				c.mu.Lock()
				c.pods = append(c.pods, o.Name)
				if o.Labels[jobsetv1.JobSetNameKey] != "" {
					c.jobsetPods++
				}
				c.mu.Unlock()
			}
		}
	}()
	a.t.Cleanup(func() { jw.Stop(); pw.Stop() })
	return c
}

// cachedSteps returns, by step, the run it was reused from ("" when it ran),
// from `pipectl runs get RUN -o json`; every step must have succeeded.
func (a *argoLab) cachedSteps(ctx context.Context, run string) map[string]string {
	a.t.Helper()
	js, _, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	var rec struct {
		Status string `json:"status"`
		Steps  []struct {
			Name       string `json:"name"`
			Status     string `json:"status"`
			Cached     bool   `json:"cached"`
			CachedFrom string `json:"cachedFrom"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 || rec.Status != "Succeeded" {
		a.t.Fatalf("runs get %s: %v (exit %d)\n%s", run, err, code, js)
	}
	got := map[string]string{}
	for _, s := range rec.Steps {
		if s.Status != "Succeeded" || s.Cached != (s.CachedFrom != "") {
			a.t.Errorf("step %s of run %s: status %s cached %v cachedFrom %q", s.Name, run, s.Status, s.Cached, s.CachedFrom)
		}
		got[s.Name] = s.CachedFrom
	}
	return got
}

// A pipeline with a distributed step run twice through Argo: the second run
// reports every step cached from the first, submits no workflow and creates
// no pod, JobSet or rank pod; its outputs are the first run's. With
// --no-cache a third run runs everything again.
func TestArgoCachedRerun(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: cached}
params:
  words: {type: string, default: "one two"}
  note: {type: string, default: "first"}
steps:
  - name: make
    component:
      metadata: {name: make}
      image: e2e-shell:1
      inputs: [{name: words, type: string}]
      outputs: [{name: text, type: Dataset}, {name: n, type: int}]
      command: [sh, -c, 'echo "making $0"; echo "$0" > "$1"; printf 2 > "$2"', "{{inputs.words}}", "{{outputs.text.path}}", "{{outputs.n.path}}"]
    inputs: {words: "{{params.words}}"}
  - name: train
    component:
      metadata: {name: train}
      image: e2e-shell:1
      inputs: [{name: text, type: Dataset}]
      outputs: [{name: model, type: Model}]
      command: [sh, -c, 'echo "training on rank $RANK"; if [ "$RANK" = 0 ]; then wc -w < "$0" | tr -d " " > "$1"; fi', "{{inputs.text.path}}", "{{outputs.model.path}}"]
    inputs: {text: "{{steps.make.outputs.text}}"}
    distributed: {nodes: 2}
  - name: report
    component:
      metadata: {name: report}
      image: e2e-shell:1
      inputs: [{name: model, type: Model}, {name: n, type: int}, {name: note, type: string}]
      outputs: [{name: words, type: int}]
      command: [sh, -c, 'echo "report: $(cat "$0") words, told $1, $3"; cat "$0" > "$2"', "{{inputs.model.path}}", "{{inputs.n}}", "{{outputs.words.path}}", "{{inputs.note}}"]
    inputs: {model: "{{steps.train.outputs.model}}", n: "{{steps.make.outputs.n}}", note: "{{params.note}}"}
`)
	steps := []string{"make", "train", "report"}
	seen := a.watchCreated(ctx)
	began := time.Now()
	first := a.runArgoOK(t, ctx, file,
		[]string{"[make] making one two", "[train] [rank 1] training on rank 1", "[report] report: 2 words, told 2"},
		[]string{"words = 2"})
	firstTook := time.Since(began)
	jobsets, pods, rankPods := seen.count()
	if jobsets != 1 || rankPods != 2 {
		t.Fatalf("the first run created %d JobSet(s) and %d rank pod(s), want 1 and 2", jobsets, rankPods)
	}
	for step, from := range a.cachedSteps(ctx, first) {
		if from != "" {
			t.Errorf("first run: step %s cached from %s", step, from)
		}
	}

	began = time.Now()
	out, errOut, code := a.runArgo(ctx, file)
	secondTook := time.Since(began)
	m := runID.FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("cached re-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	second := m[1]
	if !strings.Contains(errOut, "words = 2") {
		t.Errorf("the cached run's summary lacks the reused output parameter:\n%s", errOut)
	}
	for _, step := range steps {
		want := regexp.MustCompile(`(?m)^\s+` + step + ` Succeeded.* \(cached from ` + regexp.QuoteMeta(first) + `\)$`)
		if !want.MatchString(errOut) {
			t.Errorf("summary lacks %s cached from %s:\n%s", step, first, errOut)
		}
	}
	for _, ran := range []string{"making", "training", "report:"} {
		if strings.Contains(out, ran) {
			t.Errorf("a program ran in the cached run (%q in its log):\n%s", ran, out)
		}
	}
	if !strings.Contains(errOut, "no workflow submitted") {
		t.Errorf("the cached run submitted a workflow:\n%s", errOut)
	}
	if js, ps, _ := seen.count(); js != jobsets || ps != pods {
		t.Errorf("the cached run created JobSets or pods: %v, %v", seen.jobsets, seen.pods[pods:])
	}
	want := map[string]string{"make": first, "train": first, "report": first}
	if got := a.cachedSteps(ctx, second); !maps.Equal(got, want) {
		t.Errorf("second run cachedFrom by step %v, want %v", got, want)
	}
	if got, _, code := a.pipectl(ctx, "artifacts", "cat", second+"/train/model"); code != 0 || got != "2\n" {
		t.Errorf("artifacts cat %s/train/model = %q (exit %d), want the first run's model", second, got, code)
	}
	t.Logf("first run %s, cached re-run %s (%.0f%%)", firstTook.Round(100*time.Millisecond), secondTook.Round(100*time.Millisecond), 100*secondTook.Seconds()/firstTook.Seconds())

	// Only the last step changed: the workflow is submitted, make's and
	// train's pods find their entries (train creates no JobSet), report runs.
	partial := a.runArgoOK(t, ctx, file, []string{"[report] report: 2 words, told 2, second"}, nil, "-p", "note=second")
	want = map[string]string{"make": first, "train": first, "report": ""}
	if got := a.cachedSteps(ctx, partial); !maps.Equal(got, want) {
		t.Errorf("partial re-run cachedFrom by step %v, want %v", got, want)
	}
	if js, _, _ := seen.count(); js != jobsets {
		t.Errorf("the partial re-run created a JobSet for the cached train step: %v", seen.jobsets)
	}

	third := a.runArgoOK(t, ctx, file, []string{"[train] [rank 0] training on rank 0", "[report] report: 2 words"}, nil, "--no-cache")
	for step, from := range a.cachedSteps(ctx, third) {
		if from != "" {
			t.Errorf("--no-cache run: step %s cached from %s", step, from)
		}
	}
	if js, _, _ := seen.count(); js != 2 {
		t.Errorf("the --no-cache run created no JobSet: %v", seen.jobsets)
	}
}

// BenchmarkArgoCachedRerun runs the example pipeline through Argo twice per
// iteration — a seed of its own each iteration, so that the first run runs
// every step — and reports the wall time of `pipectl run --on argo` for the
// first run and for the re-run, where every step is cached and no JobSet is
// created (goal: the re-run takes at most 25% of the first). Run with
//
//	go test -count=1 -run '^$' -bench BenchmarkArgoCachedRerun -benchtime 1x .
func BenchmarkArgoCachedRerun(b *testing.B) {
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
	seen := a.watchCreated(ctx)
	file := filepath.Join(images.repoRoot, "examples", "attrition", "pipeline.yaml")
	var first, rerun time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		params := []string{"-p", "rows=4000", "-p", "epochs=1", "-p", fmt.Sprintf("seed=%d", 1000+i)}
		began := time.Now()
		run := a.runArgoOK(b, ctx, file, []string{"[train] [rank 1] "}, nil, params...)
		took := time.Since(began)
		jobsets, pods, _ := seen.count()
		began = time.Now()
		again := a.runArgoOK(b, ctx, file, nil, nil, params...)
		tookAgain := time.Since(began)
		for step, from := range a.cachedSteps(ctx, again) {
			if from != run {
				b.Fatalf("re-run %s: step %s cached from %q, want %s", again, step, from, run)
			}
		}
		if js, ps, _ := seen.count(); js != jobsets || ps != pods {
			b.Fatalf("the cached re-run created JobSets or pods: %v %v", seen.jobsets, seen.pods[pods:])
		}
		b.Logf("%s: first %s, cached re-run %s (%.0f%%)", run, took.Round(100*time.Millisecond), tookAgain.Round(100*time.Millisecond), 100*tookAgain.Seconds()/took.Seconds())
		first += took
		rerun += tookAgain
	}
	b.StopTimer()
	b.ReportMetric(first.Seconds()/float64(b.N), "s-first/op")
	b.ReportMetric(rerun.Seconds()/float64(b.N), "s-cached-rerun/op")
	b.ReportMetric(100*rerun.Seconds()/first.Seconds(), "%-rerun-of-first")
}
