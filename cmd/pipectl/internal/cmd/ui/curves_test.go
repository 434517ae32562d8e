package ui

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/uitest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestBrowserCurves runs a two-rank step whose rank 0 reports metrics and
// drives headless Chromium on its step page while it runs: the loss and
// accuracy curves are drawn from the 30 points reported so far, grow to 50
// live once the step goes on, and the step's list-valued output is a curve
// of its 3 numbers; the step's box shows its two ranks running, then
// succeeded.
func TestBrowserCurves(t *testing.T) {
	chromium := uitest.Chromium(t)
	shots := uitest.ShotsDir(t)
	work := t.TempDir()
	bin := buildPipectl(t, work)
	file, err := filepath.Abs(filepath.Join("testdata", "curves.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(work, "store")
	pipectl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "--artifacts", storeDir)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PIPECTL_ARTIFACTS=", "KUBECONFIG="+filepath.Join(work, "no-kubeconfig"))
		return cmd
	}
	gate := filepath.Join(work, "gate")
	held := pipectl("run", file, "-p", "gate="+gate)
	var out bytes.Buffer
	held.Stdout, held.Stderr = &out, &out
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = held.Process.Kill()
		_ = held.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	store, err := artifacts.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	// The run is ready once train's record has the 30 points rank 0 reported.
	var run *record.Run
	for ctx.Err() == nil && run == nil {
		runs, _ := recordstore.ListRuns(ctx, store, nil)
		for _, r := range runs {
			if p := r.Step("train").Progress; p != nil && len(p.Points) == 30 {
				run = r
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if run == nil {
		t.Fatalf("no run with 30 points of train:\n%s", out.String())
	}

	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))
	b := uitest.NewPage(t, ctx, chromium, base, shots)
	b.Open("/runs/" + run.ID + "?step=train")
	chart := func(metric string) string {
		return `document.querySelector('#step figure.chart[data-metric="` + metric + `"]')`
	}
	points := func(metric string) string {
		return chart(metric) + `.querySelector("polyline").getAttribute("points").trim().split(/\s+/).length`
	}
	b.WaitJS(chart("loss") + ` && ` + points("loss") + ` === 30`)
	if got := b.Text(`[...document.querySelectorAll("#step .charts figure.chart")].map(f => f.dataset.metric + "=" + f.dataset.points).join(" ")`); got != "accuracy=30 loss=30" {
		t.Errorf("charts while running: %s", got)
	}
	if got := b.Text(chart("loss") + `.querySelector("svg").getBoundingClientRect().width > 100 ? "drawn" : "not drawn"`); got != "drawn" {
		t.Errorf("loss chart %s", got)
	}
	// The gang's box: its two ranks, running.
	if got := b.Text(`(n => n.querySelector(".ranks").textContent + " | " + [...n.querySelectorAll("rect.rank")].map(r => r.dataset.state).join(" "))(document.querySelector('svg.graph a.node[data-node="train"]'))`); got != "2 ranks · 1 node × 2 procs | running running" {
		t.Errorf("train's ranks while it runs: %s", got)
	}
	b.Shot("curves-running")

	// The step goes on: the page updates itself, no reload.
	b.Do(chromedp.Evaluate[chromedp.Void](`document.body.dataset.marker = "same page"`))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.WaitJS(points("loss") + ` === 50 && ` + points("accuracy") + ` === 50`)
	b.WaitJS(`document.querySelector('#step figure.chart[data-metric="curve"]')`)
	if got := b.Text(`document.querySelector('#step figure.chart[data-metric="curve"]').dataset.points + " " + document.body.dataset.marker`); got != "3 same page" {
		t.Errorf("the list output's chart: %s", got)
	}
	b.WaitJS(`[...document.querySelectorAll('svg.graph a.node[data-node="train"] rect.rank')].map(r => r.dataset.state).join(" ") === "succeeded succeeded"`)
	b.Shot("curves-done")
	if err := held.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
}
