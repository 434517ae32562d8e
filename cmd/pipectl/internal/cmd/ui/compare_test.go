package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/uitest"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// sweepRuns runs testdata/sweep.yaml once per params list (each a run of
// the real local runner) and returns pipectl's command maker and the run
// ids, in the order run.
func sweepRuns(t *testing.T, work string, params ...[]string) (func(args ...string) *exec.Cmd, []string) {
	t.Helper()
	bin := buildPipectl(t, work)
	file, err := filepath.Abs(filepath.Join("testdata", "sweep.yaml"))
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
	store, err := artifacts.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ps := range params {
		args := []string{"run", file}
		for _, p := range ps {
			args = append(args, "-p", p)
		}
		out, _ := pipectl(args...).CombinedOutput() // some runs fail on purpose
		runs, err := recordstore.ListRuns(context.Background(), store, nil)
		if err != nil || len(runs) != len(ids)+1 {
			t.Fatalf("after pipectl %s: %d runs, %v\n%s", strings.Join(args, " "), len(runs), err, out)
		}
		for _, r := range runs {
			if !contains(ids, r.ID) {
				ids = append(ids, r.ID)
			}
		}
	}
	return pipectl, ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestBrowserCompare compares five runs of a sweep (another lr each) in
// Chromium at 1280 px: every run's column is on screen, metrics come
// first, digests are cut to 12 digits (the whole one on hover and copied
// by its button), a differing row highlights the values that are not the
// first run's, with a number's difference; the loss curves of the five
// runs are overlaid in one chart, a line per run in its legend's colour.
// At 800 px the table scrolls inside its card, its first column stays.
func TestBrowserCompare(t *testing.T) {
	chromium := uitest.Chromium(t)
	shots := uitest.ShotsDir(t)
	work := t.TempDir()
	lrs := []string{"0.1", "0.2", "0.3", "0.4", "0.5"}
	var params [][]string
	for _, lr := range lrs {
		params = append(params, []string{"lr=" + lr})
	}
	pipectl, ids := sweepRuns(t, work, params...)
	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := uitest.NewPage(t, ctx, chromium, base, shots)
	b.Open("/compare?runs=" + strings.Join(ids, ","))
	b.WaitJS(`document.querySelector("table.compare")`)

	// Every column on screen, the page no wider than the window.
	if got := b.Text(`[...document.querySelectorAll("table.compare thead th[data-run]")].map(th => { const r = th.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth ? "in" : "off:" + Math.round(r.right); }).join(" ") + " " + document.documentElement.scrollWidth`); got != "in in in in in 1280" {
		t.Errorf("at 1280px the columns (and the page's width): %s", got)
	}
	// Metrics first, then params, outputs, and the digests.
	if got := b.Text(`[...document.querySelectorAll("table.compare tr.group")].map(r => r.dataset.group).join(",")`); got != "Metrics,Params,Outputs,Steps,Code,Fingerprints,Origin" {
		t.Errorf("groups in order: %s", got)
	}
	// A differing metric: each value, the changed ones highlighted with
	// their difference to the first run's.
	row := `document.querySelector('tr[data-row="metric:report/metrics:accuracy"]')`
	if got := b.Text(row + `.className + " | " + [...` + row + `.querySelectorAll("td")].map(c => (c.classList.contains("changed") ? "*" : "") + c.textContent.trim()).join(" | ")`); got != "differs | 0.81 | *0.82 +0.01 | *0.83 +0.02 | *0.84 +0.03 | *0.85 +0.04" {
		t.Errorf("accuracy row: %s", got)
	}
	if got := b.Text(`(r => r.className + " " + [...r.querySelectorAll("td.changed")].length)(document.querySelector('tr[data-row="param:lr"]'))`); got != "differs 4" {
		t.Errorf("lr row: %s", got)
	}
	// A digest: 12 digits shown, the whole one on hover and copied.
	fp := `document.querySelector('tr[data-row="fingerprints:train"] td')`
	full := b.Text(fp + `.querySelector("code").title`)
	if shown := b.Text(fp + `.querySelector("code").textContent`); len(full) != 64 || shown != full[:12] {
		t.Errorf("fingerprint shown %q, whole %q", shown, full)
	}
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(b.Ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted}); err != nil {
			t.Fatal(err)
		}
	}
	b.Do(chromedp.Click(chromedp.CSS(`tr[data-row="fingerprints:train"] td button.copy`)))
	b.WaitJS(`document.querySelector('tr[data-row="fingerprints:train"] td button.copy').textContent === "copied"`)
	if got := b.Text(`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise); got != full {
		t.Errorf("copied %q, want %q", got, full)
	}
	// The loss curves: one chart, a line per run, in five colours named
	// by the legend.
	chart := `document.querySelector('.curves figure.chart[data-metric="train · loss"]')`
	if got := b.Text(`[...` + chart + `.querySelectorAll("polyline")].map(l => l.dataset.points + "/" + getComputedStyle(l).stroke).join(" ")`); strings.Count(got, "20/rgb(") != 5 || len(uniqueFields(got)) != 5 {
		t.Errorf("loss lines (points/colour): %s", got)
	}
	if got := b.Text(`[...document.querySelectorAll(".curves .key li")].map(li => li.dataset.run + "/" + getComputedStyle(li.querySelector("i")).color).join(" ")`); len(uniqueFields(got)) != 5 || !strings.HasPrefix(got, ids[0]+"/") {
		t.Errorf("legend: %s", got)
	}
	// The run's lines are in its legend colour: the first line is run 1's.
	if got := b.Text(`getComputedStyle(` + chart + `.querySelector("polyline")).stroke === getComputedStyle(document.querySelector(".curves .key li i")).color && ` + chart + `.querySelector("polyline title").textContent.startsWith(` + jsString(ids[0]) + `) ? "same" : "not"`); got != "same" {
		t.Errorf("the first run's line and its legend colour: %s", got)
	}
	if got := b.Text(`String(document.querySelectorAll('.curves figure.chart[data-metric="report/metrics · curve"] polyline').length)`); got != "5" {
		t.Errorf("list metric curve: %s lines, want 5", got)
	}
	b.Shot("compare-5")

	// Narrow: the table scrolls inside its card, the row names stay.
	b.Do(chromedp.EmulateViewport(800, 900))
	b.Open("/compare?runs=" + strings.Join(ids, ","))
	b.WaitJS(`document.querySelector("table.compare")`)
	if w := b.Text(`String(document.documentElement.scrollWidth)`); w != "800" {
		t.Errorf("at 800px the page is %spx wide", w)
	}
	b.Do(chromedp.Evaluate[chromedp.Void](`document.querySelector("section.flush .scroll").scrollLeft = 10000`))
	if got := b.Text(`(() => { const s = document.querySelector("section.flush .scroll"), th = document.querySelector('tr[data-row="param:lr"] th'), last = document.querySelector("thead th:last-child"); return (s.scrollLeft > 0) + " " + (Math.abs(th.getBoundingClientRect().left - s.getBoundingClientRect().left) < 2) + " " + (last.getBoundingClientRect().right <= s.getBoundingClientRect().right + 1); })()`); got != "true true true" {
		t.Errorf("scrolled to the right (scrolled, first column in place, last column shown): %s", got)
	}
	b.Shot("compare-5-narrow")
}

// uniqueFields are the distinct "/"-suffixes of space-separated fields.
func uniqueFields(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(strings.ReplaceAll(s, ", ", ",")) {
		if _, c, ok := strings.Cut(f, "/"); ok {
			out[c] = true
		}
	}
	return out
}
