package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// argoLab is a namespace ready for `pipectl run --on argo`: the step and launcher
// ServiceAccounts with their RBAC (examples/manifests), the S3 Secret, a bucket.
type argoLab struct {
	t      testing.TB
	c      *testbed.Cluster
	ns     string
	bucket string
	dir    string
	env    []string
}

func newArgoLab(t *testing.T) (*argoLab, context.Context) {
	t.Helper()
	if images.pipectl == "" || images.launcherErr != nil {
		t.Skipf("no pipectl image: %v", images.launcherErr)
	}
	c, ns, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return prepareArgoLab(t, ctx, c, ns), ctx
}

// prepareArgoLab makes namespace ns of c an argoLab (tests and benchmarks).
func prepareArgoLab(tb testing.TB, ctx context.Context, c *testbed.Cluster, ns string) *argoLab {
	tb.Helper()
	a := &argoLab{t: tb, c: c, ns: ns, bucket: ns, dir: tb.TempDir()}
	if err := c.PrepareNamespace(ctx, ns, images.repoRoot, a.bucket); err != nil {
		tb.Fatal(err)
	}
	a.env = append(os.Environ(), c.Env()...)
	a.env = append(a.env, "PIPECTL_ARTIFACTS=s3://"+a.bucket+"/"+runsPrefix)
	return a
}

// pipectl runs the pipectl binary against the test bed and returns its stdout,
// stderr and exit code.
func (a *argoLab) pipectl(ctx context.Context, args ...string) (string, string, int) {
	a.t.Helper()
	out, errOut, code, err := a.exec(ctx, args...)
	if err != nil {
		a.t.Fatalf("pipectl %s: %v", strings.Join(args, " "), err)
	}
	return out, errOut, code
}

// exec runs the pipectl binary with the lab's env; err says why it could not
// run (an exit code is not an error).
func (a *argoLab) exec(ctx context.Context, args ...string) (string, string, int, error) {
	cmd := exec.CommandContext(ctx, images.pipectl, args...)
	cmd.Env = a.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0, nil
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode(), nil
	default:
		return "", "", -1, err
	}
}

// runArgo is `pipectl run FILE --on argo` with the flags the test bed needs.
func (a *argoLab) runArgo(ctx context.Context, file string, extra ...string) (string, string, int) {
	return a.pipectl(ctx, a.argoArgs(file, extra...)...)
}

// argoArgs are the arguments of `pipectl run FILE --on argo` with the flags
// the test bed needs, then extra.
func (a *argoLab) argoArgs(file string, extra ...string) []string {
	return append(append([]string{"run", file, "--on", "argo", "-n", a.ns}, imageFlags...),
		append([]string{"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://" + a.c.MinIOEndpoint,
			"--service-account", "pipectl-step"}, extra...)...)
}

// imageFlags are the image flags of every compile and run --on argo: images are
// pinned by digest in the test bed's registry, where pushImages put them
// (--insecure-registry REG --default-registry REG: the pipelines name them
// without a registry). Set by TestMain; --image-tags (nothing resolved) until then.
var imageFlags = []string{"--image-tags"}

func writePipeline(t testing.TB, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// runID finds the run id in `pipectl run --on argo`'s stderr: the submitted
// workflow's name, or the run recorded with no workflow when every step was
// cached.
var runID = regexp.MustCompile(`(?:Submitted workflow|Every step is cached: run) (\S+) `)

// runArgoOK runs file on Argo (see runArgo), wants exit 0 and each of
// stdout's and stderr's lines in its output, and returns the run id.
func (a *argoLab) runArgoOK(t testing.TB, ctx context.Context, file string, stdout, stderr []string, extra ...string) string {
	t.Helper()
	began := time.Now()
	out, errOut, code := a.runArgo(ctx, file, extra...)
	t.Logf("pipectl run %s --on argo took %s", file, time.Since(began).Round(100*time.Millisecond))
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range stdout {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range stderr {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	m := runID.FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no run id in:\n%s", errOut)
	}
	return m[1]
}

// A two-step shell pipeline through the real Argo controller: progress lines, step
// logs, the summary, the run record and artifacts in MinIO, exit 0.
func TestArgoRunShellPipeline(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: words}
params:
  words: {type: string, default: "one two"}
steps:
  - name: make
    component:
      metadata: {name: make}
      image: e2e-shell:1
      inputs: [{name: words, type: string}]
      outputs: [{name: text, type: Dataset}, {name: n, type: int}]
      command: [sh, -c, 'echo "making $0"; echo "$0 and" > "$1"; printf 3 > "$2"', "{{inputs.words}}", "{{outputs.text.path}}", "{{outputs.n.path}}"]
    inputs: {words: "a {{params.words}}"}
  - name: count
    component:
      metadata: {name: count}
      image: e2e-shell:1
      inputs: [{name: text, type: Dataset}, {name: n, type: int}]
      command: [sh, -c, 'echo "counted $(wc -w < "$0") words, told $1"', "{{inputs.text.path}}", "{{inputs.n}}"]
    inputs: {text: "{{steps.make.outputs.text}}", n: "{{steps.make.outputs.n}}"}
`)
	run := a.runArgoOK(t, ctx, file,
		[]string{"[make] making a three", "[count] counted 3 words, told 3"},
		[]string{"make Succeeded", "count Succeeded", "Succeeded", "n = 3", "text → s3://"},
		"-p", "words=three")
	got, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/make/text")
	if code != 0 || got != "a three and\n" {
		t.Errorf("artifacts cat = %q (exit %d)", got, code)
	}
	js, _, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	var rec struct {
		Status string `json:"status"`
		On     string `json:"on"`
		Steps  []struct {
			Name     string `json:"name"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exitCode"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 {
		t.Fatalf("runs get: %v (exit %d)\n%s", err, code, js)
	}
	if rec.Status != "Succeeded" || rec.On != "argo" || len(rec.Steps) != 2 || rec.Steps[1].ExitCode == nil || *rec.Steps[1].ExitCode != 0 {
		t.Errorf("run record: %s", js)
	}
	// The step's log outlives its pod: pipectl exec uploaded it.
	logs, _, code := a.pipectl(ctx, "logs", run, "count")
	if code != 0 || !strings.Contains(logs, "counted 3 words") {
		t.Errorf("pipectl logs %s count = %q (exit %d)", run, logs, code)
	}
}

// A failing step fails the run: exit 1, its log and exit code shown, the next step skipped.
func TestArgoRunFailingStep(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: failing}
steps:
  - name: boom
    component:
      metadata: {name: boom}
      image: e2e-shell:1
      command: [sh, -c, 'echo something went wrong; exit 5']
  - name: after
    after: [boom]
    component:
      metadata: {name: after}
      image: e2e-shell:1
      command: [echo, never]
`)
	out, errOut, code := a.runArgo(ctx, file)
	if code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "[boom] something went wrong") {
		t.Errorf("stdout lacks the failing step's log:\n%s", out)
	}
	for _, want := range []string{"boom Failed", "(exit 5)", "Run failing-"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	ls, _, _ := a.pipectl(ctx, "runs", "ls", "-o", "json")
	if !strings.Contains(ls, `"status": "Failed"`) {
		t.Errorf("runs ls:\n%s", ls)
	}
}

// A step whose Secret is not in the namespace: the run is refused before
// anything is submitted (its pod would wait for the Secret), naming the
// step, the variable and the Secret.
func TestArgoRunMissingSecret(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: secretless}
steps:
  - name: needs
    secrets: [{env: TOKEN, secret: e2e-nowhere, key: token}]
    component:
      metadata: {name: needs}
      image: e2e-shell:1
      command: [sh, -c, 'echo never']
`)
	out, errOut, code := a.runArgo(ctx, file)
	if code == 0 {
		t.Fatalf("exit code 0, want an error\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if want := "step needs: secret TOKEN: no Secret e2e-nowhere in namespace " + a.ns; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if ls, _, _ := a.pipectl(ctx, "runs", "ls"); strings.Contains(errOut, "Submitted workflow") || strings.Contains(ls, "secretless-") {
		t.Errorf("a run was submitted:\n%s\n%s", errOut, ls)
	}
}

// The example pipeline end to end through Argo: preprocess pod → launcher pod → JobSet
// ranks → evaluate pod, data set and model in MinIO, metrics read back. It runs from a
// copy of the example's folder, then again after evaluate.py was edited there: only
// evaluate runs again, with the new code (shipped with the run), the others are reused.
func TestArgoRunExample(t *testing.T) {
	a, ctx := newArgoLab(t)
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(images.repoRoot, "examples", "attrition")+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "pipeline.yaml")
	params := []string{"-p", "rows=4000", "-p", "epochs=1"}
	run := a.runArgoOK(t, ctx, file,
		[]string{"[preprocess] ", "[train] [rank 0] ", "[train] [rank 1] ", "[evaluate] "},
		[]string{"preprocess Succeeded", "train Succeeded", "evaluate Succeeded", "model → s3://", "accuracy = "},
		params...)
	metrics, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/evaluate/metrics")
	var got map[string]any
	if err := json.Unmarshal([]byte(metrics), &got); err != nil || code != 0 || got["accuracy"] == nil {
		t.Errorf("artifacts cat %s/evaluate/metrics = %q (exit %d, %v)", run, metrics, code, err)
	}
	logs, _, _ := a.pipectl(ctx, "logs", run, "train")
	if !strings.Contains(logs, "[rank 1] ") {
		t.Errorf("pipectl logs %s train lacks the ranks' lines:\n%s", run, logs)
	}

	evaluate := filepath.Join(dir, "components", "evaluate", "evaluate.py")
	code0, err := os.ReadFile(evaluate)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(code0), "\nif __name__ == \"__main__\":", "\nprint(\"edited in the checkout\", flush=True)\nif __name__ == \"__main__\":", 1)
	if edited == string(code0) {
		t.Fatal("evaluate.py has no main block to edit before")
	}
	if err := os.WriteFile(evaluate, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	again := a.runArgoOK(t, ctx, file, []string{"[evaluate] edited in the checkout"}, nil, params...)
	want := map[string]string{"preprocess": run, "train": run, "evaluate": ""}
	if got := a.cachedSteps(ctx, again); !maps.Equal(got, want) {
		t.Errorf("after editing evaluate.py, steps cached from %v, want %v (only evaluate runs again)", got, want)
	}
}

// Deleting a running workflow deletes the launcher pod, hence its JobSet and rank
// pods; pipectl run says so and fails.
func TestArgoDeleteWorkflowRemovesJobSet(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: sleepy}
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
	rest := a.c.Client.Discovery().RESTClient()
	jobsetPods := func(ctx context.Context) ([]corev1.Pod, error) {
		l, err := a.c.Client.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name"})
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	waitFor(t, ctx, "both ranks running", func(ctx context.Context) (bool, error) {
		pods, err := jobsetPods(ctx)
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, err
	})
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	b, err := rest.Get().AbsPath("/apis/argoproj.io/v1alpha1/namespaces/" + a.ns + "/workflows").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("workflows: %v %s", err, b)
	}
	name := list.Items[0].Metadata.Name
	if _, err := rest.Delete().AbsPath("/apis/argoproj.io/v1alpha1/namespaces/" + a.ns + "/workflows/" + name).DoRaw(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "JobSet and rank pods gone", func(ctx context.Context) (bool, error) {
		pods, err := jobsetPods(ctx)
		if err != nil {
			return false, err
		}
		b, err := rest.Get().AbsPath("/apis/jobset.x-k8s.io/v1alpha2/namespaces/" + a.ns + "/jobsets").DoRaw(ctx)
		return len(pods) == 0 && err == nil && !strings.Contains(string(b), `"name":"`+name), err
	})
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(errOut.String(), "was deleted") {
			t.Errorf("pipectl run = %v, want a failure saying the workflow was deleted\nstderr:\n%s", err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("pipectl run still follows a deleted workflow\nstderr:\n%s", errOut.String())
		_ = cmd.Process.Kill()
	}
	if js, _, _ := a.pipectl(ctx, "runs", "get", name, "-o", "json"); !strings.Contains(js, `"status": "Cancelled"`) {
		t.Errorf("the record of a deleted workflow:\n%s", js)
	}
}
