// Package uitest drives `pipectl ui` in headless Chromium for tests: the
// UI's own browser tests and the end-to-end test against a cluster run use
// the same tab and the same Chromium.
package uitest

import (
	"context"
	_ "embed"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

//go:embed ensure-chromium.sh
var ensureChromium string

// Chromium returns the path of a Chromium, installing Debian's when there
// is none (ensure-chromium.sh: $PIPECTL_TEST_CHROMIUM, then chromium on
// PATH, then apt-get).
func Chromium(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", ensureChromium).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("ensure-chromium.sh: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("ensure-chromium.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Page is one browser tab on the UI at Base; screenshots go to Shots.
type Page struct {
	T     testing.TB
	Ctx   context.Context
	Base  string
	Shots string
}

// NewPage starts headless Chromium (the binary chromium) with a 1280×900
// window on the UI at base; it stops with the test.
func NewPage(t testing.TB, ctx context.Context, chromium, base, shots string) *Page {
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
	p := &Page{T: t, Ctx: bctx, Base: base, Shots: shots}
	p.Do(chromedp.EmulateViewport(1280, 900))
	return p
}

// ShotsDir returns testdata/out, where screenshots go, made if missing.
func ShotsDir(t testing.TB) string {
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

// Do runs actions in the tab.
func (p *Page) Do(actions ...chromedp.Action[chromedp.Void]) {
	p.T.Helper()
	if err := chromedp.Do(p.Ctx, actions...); err != nil {
		p.T.Fatal(err)
	}
}

// Open navigates to path below Base.
func (p *Page) Open(path string) {
	p.T.Helper()
	p.Do(chromedp.Navigate(p.Base + path))
}

// Text evaluates a JavaScript expression that gives a string.
func (p *Page) Text(expr string, opts ...chromedp.EvaluateOption) string {
	p.T.Helper()
	s, err := chromedp.Run(p.Ctx, chromedp.Evaluate[string](expr, opts...))
	if err != nil {
		p.T.Fatalf("%s: %v", expr, err)
	}
	return s
}

// WaitJS waits up to a minute until the expression is truthy; then it
// saves a screenshot "timeout" and fails with the page's text.
func (p *Page) WaitJS(expr string) {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(p.Ctx, time.Minute)
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
			p.Shot("timeout")
			text, _ := chromedp.Run(p.Ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			p.T.Fatalf("waiting for %s: %v (last error %v); the page says:\n%s", expr, ctx.Err(), last, text)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// Shot saves a screenshot of the whole page as NAME.png in Shots.
func (p *Page) Shot(name string) {
	p.T.Helper()
	png, err := chromedp.Run(p.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.T.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(p.Shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.T.Error(err)
	}
	p.T.Logf("screenshot %s", path)
}
