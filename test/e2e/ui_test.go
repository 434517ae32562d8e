package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/cmd/pipectl/uitest"
)

// uiPipeline is a three-step pipeline slow enough to watch: make sleeps
// before it writes its output, train is a two-rank gang, evaluate writes
// Metrics and an output parameter.
const uiPipeline = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: uiwatch}
params:
  words: {type: string, default: "one two three"}
steps:
  - name: make
    component:
      metadata: {name: make}
      image: e2e-shell:1
      inputs: [{name: words, type: string}]
      outputs: [{name: text, type: Dataset}]
      command: [sh, -c, 'echo "making $0"; sleep 6; echo "$0" > "$1"; echo "made it"', "{{inputs.words}}", "{{outputs.text.path}}"]
    inputs: {words: "{{params.words}}"}
  - name: train
    component:
      metadata: {name: train}
      image: e2e-shell:1
      inputs: [{name: text, type: Dataset}]
      outputs: [{name: model, type: Model}]
      command: [sh, -c, 'for e in 1 2 3; do echo "epoch $e on rank $RANK"; sleep 1; done; if [ "$RANK" = 0 ]; then wc -w < "$0" | tr -d " " > "$1"; fi', "{{inputs.text.path}}", "{{outputs.model.path}}"]
    inputs: {text: "{{steps.make.outputs.text}}"}
    distributed: {nodes: 2}
  - name: evaluate
    component:
      metadata: {name: evaluate}
      image: e2e-shell:1
      inputs: [{name: model, type: Model}]
      outputs: [{name: metrics, type: Metrics}, {name: verdict, type: string}]
      command: [sh, -c, 'n=$(cat "$0"); echo "evaluating a model of $n words"; printf "{\"accuracy\": 0.8750, \"words\": %s}" "$n" > "$1"; printf "ship it" > "$2"', "{{inputs.model.path}}", "{{outputs.metrics.path}}", "{{outputs.verdict.path}}"]
    inputs: {model: "{{steps.train.outputs.model}}"}
`

// TestUIArgoRun opens `pipectl ui` on the test bed's MinIO store while
// `pipectl run --on argo` runs a pipeline, and drives headless Chromium
// through it: the runs list shows the run on argo in its namespace; the
// run's page changes its DAG's statuses live (no reload) until Succeeded
// and shows a running step's log as it runs (from its pod); then the
// gang's log (both ranks, filtered), the metrics and the output parameter.
// Screenshots go to testdata/out.
func TestUIArgoRun(t *testing.T) {
	a, ctx := newArgoLab(t)
	chromium := uitest.Chromium(t)
	shots, err := filepath.Abs(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	file := writePipeline(t, uiPipeline)

	// pipectl ui first, on the same store and kubeconfig as the run.
	base := a.startUI(t, ctx)

	// Then the run, in the background.
	run := exec.CommandContext(ctx, images.pipectl, a.argoArgs(file)...)
	run.Env = a.env
	var runOut strings.Builder
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()

	b := uitest.NewPage(t, ctx, chromium, base, shots)

	// The runs list: the run appears, running on argo in the namespace.
	b.Open("/")
	b.WaitJS(`document.querySelector("table.runs tbody tr")`)
	id := b.Text(`document.querySelector("table.runs tbody tr").dataset.run`)
	if !strings.HasPrefix(id, "uiwatch-") {
		t.Fatalf("runs list shows run %q, want the uiwatch run", id)
	}
	row := `document.querySelector('tr[data-run="` + id + `"]')`
	if got := b.Text(row + `.querySelector(".where").textContent`); got != "argo · "+a.ns {
		t.Errorf("runs list: where = %q, want %q", got, "argo · "+a.ns)
	}
	if got := b.Text(row + `.querySelector(".pipeline").textContent`); got != "uiwatch" {
		t.Errorf("runs list: pipeline = %q", got)
	}
	// The live table turns the run Succeeded by itself later; now it runs.
	if got := b.Text(row + `.querySelector(".badge").textContent`); got != "Running" {
		t.Errorf("runs list: status = %q, want Running", got)
	}
	b.Shot("ui-argo-runs")

	// The run's page: record every state of the DAG the page shows, without
	// reloading it, until the run ended.
	b.Open("/runs/" + id + "?step=make")
	b.WaitJS(`document.querySelectorAll("svg.graph a.node").length === 3`)
	b.Do(chromedp.Evaluate[chromedp.Void](`window.pipectlSamePage = true`))
	if got := b.Text(`document.querySelector(".meta").textContent`); !strings.HasPrefix(got, "argo · "+a.ns+" · ") {
		t.Errorf("run page meta = %q, want it to start with argo · %s", got, a.ns)
	}
	const dagState = `[...document.querySelectorAll("svg.graph a.node")].map(n => n.dataset.node + "=" + n.dataset.status).join(" ") + " | " + document.querySelector(".runid .badge").textContent`
	var states []string
	shotRunning, liveLog := false, false
	deadline := time.Now().Add(4 * time.Minute)
	for {
		s := b.Text(dagState)
		if len(states) == 0 || states[len(states)-1] != s {
			states = append(states, s)
			t.Logf("DAG: %s", s)
		}
		// make's log while it runs: its pod's, before pipectl exec stores it.
		if strings.Contains(s, "make=Running") && !liveLog && b.Text(`String(document.getElementById("log").textContent.includes("making one two three"))`) == "true" {
			liveLog = true
			b.Shot("ui-argo-make-live-log")
		}
		if !shotRunning && strings.Contains(s, "train=Running") {
			b.Shot("ui-argo-run-running")
			shotRunning = true
		}
		if !strings.HasSuffix(s, "| Running") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	final := "make=Succeeded train=Succeeded evaluate=Succeeded | Succeeded"
	if states[len(states)-1] != final {
		t.Fatalf("the page ended at %q, want %q\npipectl run:\n%s", states[len(states)-1], final, runOut.String())
	}
	if b.Text(`String(window.pipectlSamePage === true)`) != "true" {
		t.Error("the run page reloaded: the DAG did not change live")
	}
	// The page saw the run go by: a step running, then that step done and
	// the next one running.
	for _, want := range []string{"make=Running", "train=Running"} {
		if !slices.ContainsFunc(states, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("the page never showed %s; it showed:\n%s", want, strings.Join(states, "\n"))
		}
	}
	if !liveLog {
		t.Error("the page never showed make's log while make ran")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("pipectl run --on argo: %v\n%s", err, runOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("pipectl run --on argo did not end:\n%s", runOut.String())
	}
	b.Shot("ui-argo-run-succeeded")

	// The gang's log: both ranks' lines, then only rank 1's.
	b.Open("/runs/" + id + "?step=train")
	b.WaitJS(`document.getElementById("log").textContent.includes("[rank 1] epoch 3 on rank 1")`)
	b.WaitJS(`document.getElementById("ranks").textContent === "2"`)
	b.Do(chromedp.SetValue(chromedp.CSS("#rank"), "1"), chromedp.Evaluate[chromedp.Void](`document.getElementById("rank").dispatchEvent(new Event("change"))`))
	b.WaitJS(`(() => { const t = document.getElementById("log").textContent; return t.includes("epoch 2 on rank 1") && !t.includes("on rank 0"); })()`)
	b.Shot("ui-argo-train-log-rank1")

	// evaluate: its metrics as a table, its output parameter, its log.
	b.Open("/runs/" + id + "?step=evaluate")
	b.WaitJS(`document.querySelector('tr[data-metric="accuracy"]')`)
	if got := b.Text(`document.querySelector('tr[data-metric="accuracy"] td').textContent + " " + document.querySelector('tr[data-metric="words"] td').textContent`); got != "0.8750 3" {
		t.Errorf("metrics accuracy, words = %q, want \"0.8750 3\"", got)
	}
	if got := b.Text(`document.querySelector("code.value").textContent`); got != "ship it" {
		t.Errorf("output parameter verdict = %q, want \"ship it\"", got)
	}
	b.WaitJS(`document.getElementById("log").textContent.includes("evaluating a model of 3 words")`)
	b.Shot("ui-argo-evaluate")

	// The list shows it Succeeded now.
	b.Open("/")
	b.WaitJS(row + `.querySelector(".badge").textContent === "Succeeded"`)
}

// startUI starts `pipectl ui` on the lab's store and cluster and returns its
// URL (without the trailing /).
func (a *argoLab) startUI(t *testing.T, ctx context.Context) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, images.pipectl, "ui", "--listen", "127.0.0.1:0")
	cmd.Env = a.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`serving .* at (http://\S+)/`)
		for sc.Scan() {
			t.Log("pipectl ui: " + sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-addr:
		return u
	case <-time.After(time.Minute):
		t.Fatal("pipectl ui did not say where it serves")
	}
	return ""
}
