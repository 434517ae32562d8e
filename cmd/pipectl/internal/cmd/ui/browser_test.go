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
)

// TestBrowser runs `pipectl ui` on a store with runs made by the real local
// runner (a succeeded run, a failed run, a run held running until the test
// lets it go) and drives headless Chromium through it: the runs list and its
// filter, the DAG and statuses, a live status change, a log filtered by
// rank, a metric value, previews, a download and a Range request, the
// comparison, a narrow window. Screenshots go to testdata/out for a person
// to look at.
func TestBrowser(t *testing.T) {
	chromium := ensureChromium(t)
	shots := shotsDir(t)
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
	var ok, failed, running *artifacts.Run
	for ctx.Err() == nil && running == nil {
		runs, _ := artifacts.ListRuns(ctx, store, nil)
		for _, r := range runs {
			switch {
			case r.Status == artifacts.StatusSucceeded:
				ok = r
			case r.Status == artifacts.StatusFailed:
				failed = r
			case r.Status == artifacts.StatusRunning && r.Step("evaluate").Status == artifacts.StatusRunning:
				running = r
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ok == nil || failed == nil || running == nil {
		t.Fatalf("runs not ready (succeeded %v, failed %v, running %v):\n%s", ok != nil, failed != nil, running != nil, heldOut.String())
	}

	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))

	b := newPage(t, ctx, chromium, base, shots)

	// The runs list: newest first, each status, and the filter.
	b.open("/")
	b.waitJS(`document.querySelectorAll("table.runs tbody tr").length === 3`)
	if got := b.text(`[...document.querySelectorAll("table.runs tbody tr")].map(r => r.dataset.run + " " + r.querySelector(".badge").textContent).join("\n")`); got != running.ID+" Running\n"+failed.ID+" Failed\n"+ok.ID+" Succeeded" {
		t.Errorf("runs list:\n%s", got)
	}
	b.shot("runs")
	b.open("/?status=Failed")
	b.waitJS(`document.querySelectorAll("table.runs tbody tr").length === 1 && document.querySelector("table.runs tbody tr").dataset.run === ` + jsString(failed.ID))

	// A succeeded run: the DAG, every status, the metrics of evaluate.
	b.open("/runs/" + ok.ID + "?step=evaluate")
	b.waitJS(`document.querySelectorAll("svg.graph a.node").length === 5`)
	if got := b.text(`[...document.querySelectorAll("svg.graph a.node")].map(n => n.dataset.node + "=" + n.dataset.status).sort().join(" ")`); got != "evaluate=Succeeded prepare=Succeeded profile=Succeeded report=Succeeded train=Succeeded" {
		t.Errorf("DAG nodes: %s", got)
	}
	if n := b.text(`String(document.querySelectorAll("svg.graph path.edge").length)`); n != "5" {
		t.Errorf("DAG has %s edges, want 5", n)
	}
	if got := b.text(`document.querySelector('tr[data-metric="accuracy"] td').textContent`); got != "0.9135" {
		t.Errorf("metric accuracy = %q, want 0.9135", got)
	}
	if got := b.text(`document.querySelector("code.value").textContent`); got != "ship it" {
		t.Errorf("output parameter verdict = %q", got)
	}
	b.shot("run-succeeded")

	// Previews: a CSV head as a table, JSON pretty-printed, an image inline.
	b.open("/runs/" + ok.ID + "?step=prepare")
	b.waitJS(`document.querySelector(".preview table.csv")`)
	if got := b.text(`[...document.querySelectorAll(".preview table.csv th")].map(th => th.textContent).join(",") + " " + document.querySelector(".preview table.csv td").textContent`); got != "employee,age,tenure,left e1" {
		t.Errorf("CSV preview: %s", got)
	}
	if got := b.text(`document.querySelector('[data-output="schema"] .preview pre').textContent`); !strings.Contains(got, "\n  \"columns\": [\n") {
		t.Errorf("JSON preview is not pretty-printed:\n%s", got)
	}
	b.open("/runs/" + ok.ID + "?step=profile")
	b.waitJS(`(() => { const i = document.querySelector(".preview img"); return i && i.complete && i.naturalWidth === 240; })()`)

	// A download through the browser: the bytes of the store's object.
	b.open("/runs/" + ok.ID + "?step=train")
	got := b.download(`[data-output="model"] a.button`)
	var want bytes.Buffer
	if err := artifacts.Copy(ctx, store, ok.ID+"/train/model", &want, ""); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("downloaded model %q, want %q", got, want.Bytes())
	}
	// A Range request from the page, and the sha256 the page shows.
	if got := b.text(`fetch(document.querySelector('[data-output="model"] a.button').href, {headers: {Range: "bytes=2-5"}}).then(async r => r.status + " " + r.headers.get("Content-Range") + " " + [...new Uint8Array(await r.arrayBuffer())].join(","))`, chromedp.EvalAwaitPromise); got != fmt.Sprintf("206 bytes 2-5/%d %s", want.Len(), bytesList(want.Bytes()[2:6])) {
		t.Errorf("Range request: %s", got)
	}

	// The log of a two-rank step, then only rank 1's lines.
	b.waitJS(`document.getElementById("log").textContent.includes("[train rank 1] epoch 3")`)
	b.waitJS(`document.getElementById("ranks").textContent === "2"`)
	b.do(chromedp.SetValue(chromedp.CSS("#rank"), "1"), chromedp.Evaluate[chromedp.Void](`document.getElementById("rank").dispatchEvent(new Event("change"))`))
	b.waitJS(`(() => { const t = document.getElementById("log").textContent; return t.includes("[train rank 1]") && !t.includes("rank 0]"); })()`)
	b.shot("run-log-rank1")

	// A failed run: the failed step, the skipped ones, why.
	b.open("/runs/" + failed.ID)
	b.waitJS(`document.querySelector('a.node[data-node="train"]').dataset.status === "Failed" && document.querySelector('a.node[data-node="report"]').dataset.status === "Skipped"`)
	b.waitJS(`document.getElementById("log").textContent.includes("NCCL watchdog timeout")`)
	if got := b.text(`document.querySelector("#step .message").textContent`); !strings.Contains(got, "exit code 3") {
		t.Errorf("failed step message: %q", got)
	}
	b.shot("run-failed")

	// Compare: lr differs, the metrics of the failed run are missing.
	b.open("/compare?runs=" + ok.ID + "," + failed.ID)
	b.waitJS(`document.querySelector('tr[data-row="param:lr"]').classList.contains("differs") && !document.querySelector('tr[data-row="param:rows"]').classList.contains("differs")`)
	if got := b.text(`[...document.querySelector('tr[data-row="metric:evaluate/metrics:accuracy"]').children].map(c => c.textContent.replace(/\s+/g, " ").trim()).join(" | ")`); got != "accuracy evaluate/metrics | 0.9135 | —" {
		t.Errorf("compare accuracy row: %q", got)
	}
	b.shot("compare")

	// The running run changes while its page is open: in one tab on step
	// evaluate, in another as opened from the runs list, following the run.
	b.open("/runs/" + running.ID + "?step=evaluate")
	b.waitJS(`document.querySelector('a.node[data-node="evaluate"]').dataset.status === "Running" && document.querySelector('a.node[data-node="report"]').dataset.status === "Pending"`)
	// The log of the running step, tailed while it waits at the gate.
	b.waitJS(`document.getElementById("log").textContent.includes("[evaluate] evaluating")`)
	b.shot("run-running")
	tab, closeTab := chromedp.NewContext(b.ctx)
	defer closeTab()
	f := &page{t: t, ctx: tab, base: base, shots: shots}
	f.open("/runs/" + running.ID)
	f.waitJS(`document.getElementById("step").dataset.step === "evaluate" && document.getElementById("log").textContent.includes("[evaluate] evaluating")`)
	f.do(chromedp.Evaluate[chromedp.Void](`window.pipectlSamePage = true`))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.waitJS(`document.querySelector('a.node[data-node="report"]').dataset.status === "Succeeded" && document.querySelector(".runid .badge").textContent === "Succeeded"`)
	b.waitJS(`document.getElementById("log").textContent.includes("accuracy 0.9135")`)
	b.shot("run-finished-live")
	// The following tab moved on to report, the last step, and its log.
	f.waitJS(`document.getElementById("step").dataset.step === "report" && document.querySelector(".log h2 .muted").textContent === "report"`)
	f.waitJS(`(() => { const t = document.getElementById("log").textContent; return t.includes("[report] report written") && !t.includes("[evaluate]"); })()`)
	if got := f.text(`String(window.pipectlSamePage === true)`); got != "true" {
		t.Error("the following tab reloaded")
	}
	f.shot("run-followed")
	if err := held.Wait(); err != nil {
		t.Errorf("the held run: %v\n%s", err, heldOut.String())
	}

	// A narrow window: nothing wider than the screen but the DAG's own scroller.
	b.do(chromedp.EmulateViewport(400, 860))
	b.open("/runs/" + ok.ID + "?step=evaluate")
	b.waitJS(`document.querySelector('tr[data-metric="accuracy"]')`)
	if w := b.text(`String(document.documentElement.scrollWidth)`); w != "400" {
		t.Errorf("at 400px the page is %spx wide", w)
	}
	// The DAG is wider than the window: it shows the selected step.
	b.waitJS(`(() => { const b = document.querySelector(".dag .scroll").getBoundingClientRect(), n = document.querySelector('a.node[data-node="evaluate"]').getBoundingClientRect(); return n.left >= b.left && n.right <= b.right; })()`)
	b.shot("run-narrow")
	b.open("/")
	b.waitJS(`document.querySelector("table.runs")`)
	// Each run a card: where it ran and how long it took still shown.
	for _, cell := range []string{"where", "took"} {
		if got := b.text(`(() => { const td = document.querySelector('tr[data-run="` + ok.ID + `"] td.` + cell + `'), r = td.getBoundingClientRect(); return r.width > 0 && r.right <= 400 ? td.textContent : "hidden"; })()`); got == "hidden" || got == "" {
			t.Errorf("at 400px the runs list's %s cell is %q", cell, got)
		}
	}
	if w := b.text(`String(document.documentElement.scrollWidth)`); w != "400" {
		t.Errorf("at 400px the runs list is %spx wide", w)
	}
	b.shot("runs-narrow")
}

// page drives one browser tab against the UI at base.
type page struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

// newPage starts headless Chromium with a 1280×900 window, for the UI at
// base; screenshots go to shots.
func newPage(t *testing.T, ctx context.Context, chromium, base, shots string) *page {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	p := &page{t: t, ctx: bctx, base: base, shots: shots}
	p.do(chromedp.EmulateViewport(1280, 900))
	return p
}

// shotsDir returns testdata/out, where screenshots go, made if missing.
func shotsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
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

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

func (p *page) open(path string) {
	p.t.Helper()
	p.do(chromedp.Navigate(p.base + path))
}

// text evaluates a JavaScript expression that gives a string.
func (p *page) text(expr string, opts ...chromedp.EvaluateOption) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr, opts...))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// waitJS waits until the expression is truthy.
func (p *page) waitJS(expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	var last error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return
		}
		last = err
		select {
		case <-ctx.Done():
			p.shot("timeout")
			html, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			p.t.Fatalf("waiting for %s: %v (last error %v); the page says:\n%s", expr, ctx.Err(), last, html)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// shot saves a screenshot of the whole page as testdata/out/NAME.png.
func (p *page) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(p.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Error(err)
	}
	p.t.Logf("screenshot %s", path)
}

// download clicks the link sel and returns the bytes the browser saved.
func (p *page) download(sel string) []byte {
	p.t.Helper()
	dir := p.t.TempDir()
	events := true
	if _, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events}); err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	p.do(chromedp.Click(chromedp.CSS(sel)))
	for ev, err := range progress {
		if err != nil {
			p.t.Fatalf("download %s: %v", sel, err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				p.t.Fatal(err)
			}
			return b
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			p.t.Fatalf("download %s cancelled", sel)
		}
	}
	p.t.Fatalf("download %s: no completion", sel)
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

// ensureChromium returns the path of a Chromium, installing Debian's when
// there is none (testdata/ensure-chromium.sh).
func ensureChromium(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join("testdata", "ensure-chromium.sh")).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("ensure-chromium.sh: %v\n%s", err, stderr)
	}
	return strings.TrimSpace(string(out))
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
