package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/uitest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestBrowser runs `pipectl ui` on a store with runs made by the real local
// runner (a succeeded run, a failed run, a run held running until the test
// lets it go) and drives headless Chromium through it: the runs list and its
// filter, the DAG and statuses, a live status change, a log filtered by
// rank, a metric value, previews, a download and a Range request, the
// comparison, a narrow window. Screenshots go to testdata/out for a person
// to look at.
func TestBrowser(t *testing.T) {
	chromium := uitest.Chromium(t)
	shots := uitest.ShotsDir(t)
	work := t.TempDir()
	bin := buildPipectl(t, work)
	demo, err := filepath.Abs(filepath.Join("testdata", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(work, "store")
	plot := filepath.Join(work, "plot.png")
	writePlot(t, plot)
	pipectl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "--artifacts", storeDir)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PIPECTL_ARTIFACTS=", "KUBECONFIG="+filepath.Join(work, "no-kubeconfig"))
		return cmd
	}
	run := func(wantOK bool, params ...string) {
		t.Helper()
		args := []string{"run", demo, "-p", "plot=" + plot}
		for _, p := range params {
			args = append(args, "-p", p)
		}
		out, err := pipectl(args...).CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("pipectl %s: %v (want success %v)\n%s", strings.Join(args, " "), err, wantOK, out)
		}
	}
	run(true)
	run(false, "fail=true", "lr=0.2")
	gate := filepath.Join(work, "gate")
	held := pipectl("run", demo, "-p", "plot="+plot, "-p", "gate="+gate, "-p", "rows=12", "--no-cache")
	var heldOut bytes.Buffer
	held.Stdout, held.Stderr = &heldOut, &heldOut
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = held.Process.Kill()
		_ = held.Wait()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	store, err := artifacts.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	// The held run is running once its evaluate step waits at the gate.
	var ok, failed, running *record.Run
	for ctx.Err() == nil && running == nil {
		runs, _ := recordstore.ListRuns(ctx, store, nil)
		for _, r := range runs {
			switch {
			case r.Status == record.StatusSucceeded:
				ok = r
			case r.Status == record.StatusFailed:
				failed = r
			case r.Status == record.StatusRunning && r.Step("evaluate").Status == record.StatusRunning:
				running = r
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ok == nil || failed == nil || running == nil {
		t.Fatalf("runs not ready (succeeded %v, failed %v, running %v):\n%s", ok != nil, failed != nil, running != nil, heldOut.String())
	}

	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))

	b := uitest.NewPage(t, ctx, chromium, base, shots)

	// The runs list: newest first, each status, and the filter.
	b.Open("/")
	b.WaitJS(`document.querySelectorAll("table.runs tbody tr").length === 3`)
	if got := b.Text(`[...document.querySelectorAll("table.runs tbody tr")].map(r => r.dataset.run + " " + r.querySelector(".badge").textContent).join("\n")`); got != running.ID+" Running\n"+failed.ID+" Failed\n"+ok.ID+" Succeeded" {
		t.Errorf("runs list:\n%s", got)
	}
	b.Shot("runs")
	b.Open("/?status=Failed")
	b.WaitJS(`document.querySelectorAll("table.runs tbody tr").length === 1 && document.querySelector("table.runs tbody tr").dataset.run === ` + jsString(failed.ID))

	// A succeeded run: the DAG, every status, the metrics of evaluate.
	b.Open("/runs/" + ok.ID + "?step=evaluate")
	b.WaitJS(`document.querySelectorAll("svg.graph a.node").length === 5`)
	if got := b.Text(`[...document.querySelectorAll("svg.graph a.node")].map(n => n.dataset.node + "=" + n.dataset.status).sort().join(" ")`); got != "evaluate=Succeeded prepare=Succeeded profile=Succeeded report=Succeeded train=Succeeded" {
		t.Errorf("DAG nodes: %s", got)
	}
	if n := b.Text(`String(document.querySelectorAll("svg.graph path.edge").length)`); n != "5" {
		t.Errorf("DAG has %s edges, want 5", n)
	}
	if got := b.Text(`document.querySelector('tr[data-metric="accuracy"] td').textContent`); got != "0.9135" {
		t.Errorf("metric accuracy = %q, want 0.9135", got)
	}
	// A long number is rounded for display, exact on hover.
	if got := b.Text(`(c => c.textContent + " " + c.querySelector("span.rounded").title)(document.querySelector('tr[data-metric="auc"] td'))`); got != "0.9502 0.95023456789" {
		t.Errorf("metric auc shown as %q, want 0.9502 with the exact 0.95023456789 on hover", got)
	}
	if got := b.Text(`document.querySelector("code.value").textContent`); got != "ship it" {
		t.Errorf("output parameter verdict = %q", got)
	}
	b.Shot("run-succeeded")

	// Previews: a CSV head as a table, JSON pretty-printed, an image inline.
	b.Open("/runs/" + ok.ID + "?step=prepare")
	b.WaitJS(`document.querySelector(".preview table.csv")`)
	if got := b.Text(`[...document.querySelectorAll(".preview table.csv th")].map(th => th.textContent).join(",") + " " + document.querySelector(".preview table.csv td").textContent`); got != "employee,age,tenure,left e1" {
		t.Errorf("CSV preview: %s", got)
	}
	if got := b.Text(`document.querySelector('[data-output="schema"] .preview pre').textContent`); !strings.Contains(got, "\n  \"columns\": [\n") {
		t.Errorf("JSON preview is not pretty-printed:\n%s", got)
	}
	b.Open("/runs/" + ok.ID + "?step=profile")
	b.WaitJS(`(() => { const i = document.querySelector(".preview img"); return i && i.complete && i.naturalWidth === 240; })()`)

	// A download through the browser: the bytes of the store's object.
	b.Open("/runs/" + ok.ID + "?step=train")
	got := download(b, `[data-output="model"] a.button`)
	var want bytes.Buffer
	if err := artifacts.Copy(ctx, store, ok.ID+"/train/model", &want, ""); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("downloaded model %q, want %q", got, want.Bytes())
	}
	// A Range request from the page, and the sha256 the page shows.
	if got := b.Text(`fetch(document.querySelector('[data-output="model"] a.button').href, {headers: {Range: "bytes=2-5"}}).then(async r => r.status + " " + r.headers.get("Content-Range") + " " + [...new Uint8Array(await r.arrayBuffer())].join(","))`, chromedp.EvalAwaitPromise); got != fmt.Sprintf("206 bytes 2-5/%d %s", want.Len(), bytesList(want.Bytes()[2:6])) {
		t.Errorf("Range request: %s", got)
	}

	// The log of a two-rank step, then only rank 1's lines.
	b.WaitJS(`document.getElementById("log").textContent.includes("[train rank 1] epoch 3")`)
	b.WaitJS(`document.getElementById("ranks").textContent === "2"`)
	b.Do(chromedp.SetValue(chromedp.CSS("#rank"), "1"), chromedp.Evaluate[chromedp.Void](`document.getElementById("rank").dispatchEvent(new Event("change"))`))
	b.WaitJS(`(() => { const t = document.getElementById("log").textContent; return t.includes("[train rank 1]") && !t.includes("rank 0]"); })()`)
	b.Shot("run-log-rank1")

	// A failed run: the failed step, the skipped ones, why.
	b.Open("/runs/" + failed.ID)
	b.WaitJS(`document.querySelector('a.node[data-node="train"]').dataset.status === "Failed" && document.querySelector('a.node[data-node="report"]').dataset.status === "Skipped"`)
	b.WaitJS(`document.getElementById("log").textContent.includes("NCCL watchdog timeout")`)
	if got := b.Text(`document.querySelector("#step .message").textContent`); !strings.Contains(got, "exit code 3") {
		t.Errorf("failed step message: %q", got)
	}
	b.Shot("run-failed")

	// Compare: lr differs, the metrics of the failed run are missing.
	b.Open("/compare?runs=" + ok.ID + "," + failed.ID)
	b.WaitJS(`document.querySelector('tr[data-row="param:lr"]').classList.contains("differs") && !document.querySelector('tr[data-row="param:rows"]').classList.contains("differs")`)
	if got := b.Text(`[...document.querySelector('tr[data-row="metric:evaluate/metrics:accuracy"]').children].map(c => c.textContent.replace(/\s+/g, " ").trim()).join(" | ")`); got != "accuracy evaluate/metrics | 0.9135 | —" {
		t.Errorf("compare accuracy row: %q", got)
	}
	b.Shot("compare")

	// The running run changes while its page is open: in one tab on step
	// evaluate, in another as opened from the runs list, following the run.
	b.Open("/runs/" + running.ID + "?step=evaluate")
	b.WaitJS(`document.querySelector('a.node[data-node="evaluate"]').dataset.status === "Running" && document.querySelector('a.node[data-node="report"]').dataset.status === "Pending"`)
	// The log of the running step, tailed while it waits at the gate.
	b.WaitJS(`document.getElementById("log").textContent.includes("[evaluate] evaluating")`)
	b.Shot("run-running")
	tab, closeTab := chromedp.NewContext(b.Ctx)
	defer closeTab()
	f := &uitest.Page{T: t, Ctx: tab, Base: base, Shots: shots}
	f.Open("/runs/" + running.ID)
	f.WaitJS(`document.getElementById("step").dataset.step === "evaluate" && document.getElementById("log").textContent.includes("[evaluate] evaluating")`)
	f.Do(chromedp.Evaluate[chromedp.Void](`window.pipectlSamePage = true`))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.WaitJS(`document.querySelector('a.node[data-node="report"]').dataset.status === "Succeeded" && document.querySelector(".runid .badge").textContent === "Succeeded"`)
	b.WaitJS(`document.getElementById("log").textContent.includes("accuracy 0.9135")`)
	b.Shot("run-finished-live")
	// The following tab moved on to report, the last step, and its log.
	f.WaitJS(`document.getElementById("step").dataset.step === "report" && document.querySelector(".log h2 .muted").textContent === "report"`)
	f.WaitJS(`(() => { const t = document.getElementById("log").textContent; return t.includes("[report] report written") && !t.includes("[evaluate]"); })()`)
	if got := f.Text(`String(window.pipectlSamePage === true)`); got != "true" {
		t.Error("the following tab reloaded")
	}
	f.Shot("run-followed")
	if err := held.Wait(); err != nil {
		t.Errorf("the held run: %v\n%s", err, heldOut.String())
	}

	// A narrow window: nothing wider than the screen but the DAG's own scroller.
	b.Do(chromedp.EmulateViewport(400, 860))
	b.Open("/runs/" + ok.ID + "?step=evaluate")
	b.WaitJS(`document.querySelector('tr[data-metric="accuracy"]')`)
	if w := b.Text(`String(document.documentElement.scrollWidth)`); w != "400" {
		t.Errorf("at 400px the page is %spx wide", w)
	}
	// The DAG is wider than the window: it shows the selected step.
	b.WaitJS(`(() => { const b = document.querySelector(".dag .scroll").getBoundingClientRect(), n = document.querySelector('a.node[data-node="evaluate"]').getBoundingClientRect(); return n.left >= b.left && n.right <= b.right; })()`)
	b.Shot("run-narrow")
	b.Open("/")
	b.WaitJS(`document.querySelector("table.runs")`)
	// Each run a card: where it ran and how long it took still shown.
	for _, cell := range []string{"where", "took"} {
		if got := b.Text(`(() => { const td = document.querySelector('tr[data-run="` + ok.ID + `"] td.` + cell + `'), r = td.getBoundingClientRect(); return r.width > 0 && r.right <= 400 ? td.textContent : "hidden"; })()`); got == "hidden" || got == "" {
			t.Errorf("at 400px the runs list's %s cell is %q", cell, got)
		}
	}
	if w := b.Text(`String(document.documentElement.scrollWidth)`); w != "400" {
		t.Errorf("at 400px the runs list is %spx wide", w)
	}
	b.Shot("runs-narrow")
}

// buildPipectl builds pipectl into dir and returns its path.
func buildPipectl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "pipectl")
	if out, err := exec.Command("go", "build", "-o", bin, "pipectl.dev/pipectl/cmd/pipectl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// download clicks the link sel and returns the bytes the browser saved.
func download(p *uitest.Page, sel string) []byte {
	p.T.Helper()
	dir := p.T.TempDir()
	events := true
	if _, err := chromedp.CallBrowser(p.Ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events}); err != nil {
		p.T.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(p.Ctx, time.Minute)
	defer cancel()
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	p.Do(chromedp.Click(chromedp.CSS(sel)))
	for ev, err := range progress {
		if err != nil {
			p.T.Fatalf("download %s: %v", sel, err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				p.T.Fatal(err)
			}
			return b
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			p.T.Fatalf("download %s cancelled", sel)
		}
	}
	p.T.Fatalf("download %s: no completion", sel)
	return nil
}

// startUI starts pipectl ui and returns its URL (without the trailing /).
func startUI(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
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
			t.Log(sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(time.Minute):
		t.Fatal("pipectl ui did not say where it serves")
	}
	return ""
}

// writePlot writes a small bar chart as a PNG, 240×120.
func writePlot(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 240, 120))
	bars := []int{30, 55, 80, 100, 70, 45, 25, 15}
	for y := range 120 {
		for x := range 240 {
			c := color.RGBA{255, 255, 255, 255}
			if b := bars[x/30]; x%30 >= 8 && x%30 < 26 && y >= 112-b && y < 112 {
				c = color.RGBA{47, 91, 234, 255}
			} else if y == 112 {
				c = color.RGBA{120, 120, 120, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func bytesList(b []byte) string {
	s := make([]string, len(b))
	for i, c := range b {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
