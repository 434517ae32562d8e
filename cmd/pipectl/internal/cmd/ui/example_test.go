package ui

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/cmd/pipectl/uitest"
)

var update = flag.Bool("update", false, "write the README's screenshot (../../ui/docs/run.png) from TestExampleScreenshot")

// readmeShot is the README's screenshot of a run, relative to this package.
var readmeShot = filepath.Join("..", "..", "ui", "docs", "run.png")

// TestExampleScreenshot runs examples/attrition as the README's quickstart
// does (real PyTorch, DDP on 2 ranks) and looks at the run in pipectl ui:
// the DAG preprocess → train → evaluate, the two ranks of train, the
// metrics of evaluate. Its screenshot is testdata/out/example.png; with
// -update it also becomes the README's image.
func TestExampleScreenshot(t *testing.T) {
	chromium := uitest.Chromium(t)
	repo, err := filepath.Abs(filepath.Join("..", "..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pydir, err := exec.Command(filepath.Join(repo, "examples", "attrition", "ensure-torch.sh")).Output()
	if err != nil {
		t.Fatalf("examples/attrition/ensure-torch.sh: %v", err)
	}
	shots := uitest.ShotsDir(t)
	work := t.TempDir()
	bin := buildPipectl(t, work)
	pipectl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PIPECTL_ARTIFACTS=", "KUBECONFIG="+filepath.Join(work, "no-kubeconfig"),
			"PATH="+strings.TrimSpace(string(pydir))+string(os.PathListSeparator)+os.Getenv("PATH"))
		return cmd
	}
	// Fewer rows than the default, for time: the picture is the same.
	if out, err := pipectl("run", filepath.Join(repo, "examples", "attrition", "pipeline.yaml"), "-p", "rows=20000").CombinedOutput(); err != nil {
		t.Fatalf("pipectl run examples/attrition: %v\n%s", err, out)
	}
	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := uitest.NewPage(t, ctx, chromium, base, shots)

	// train: both ranks' lines in its log.
	b.Open("/runs/latest?step=train")
	b.WaitJS(`document.getElementById("ranks").textContent === "2"`)

	b.Open("/runs/latest?step=evaluate")
	b.WaitJS(`document.querySelectorAll('tr[data-metric]').length >= 3 && document.getElementById("log").textContent.includes("[evaluate]")`)
	if got := b.Text(`[...document.querySelectorAll("svg.graph a.node")].map(n => n.dataset.node + "=" + n.dataset.status).join(" ")`); got != "preprocess=Succeeded train=Succeeded evaluate=Succeeded" {
		t.Errorf("DAG nodes: %s", got)
	}
	if got := b.Text(`[...document.querySelectorAll("svg.graph path.edge")].map(e => e.dataset.edge).sort().join(" ")`); got != "preprocess>evaluate preprocess>train train>evaluate" {
		t.Errorf("DAG edges: %s", got)
	}
	if got := b.Text(`[...document.querySelectorAll("tr[data-metric]")].map(r => r.dataset.metric).join(" ")`); got != "accuracy auc loss rows" {
		t.Errorf("metrics: %s", got)
	}
	// The picture: the page at 1280×900, its top (the DAG, the step, the
	// metrics).
	b.Do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "example.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(png) > 200<<10 {
		t.Errorf("the screenshot is %d KiB, more than the README's 200 KiB", len(png)>>10)
	}
	if *update {
		if err := os.WriteFile(readmeShot, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", readmeShot)
	}
}
