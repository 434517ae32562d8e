package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pipectl.dev/pipectl/cmd/pipectl/uitest"
)

// TestBrowserDAGGroups runs the sweep four times (a loop of 3; a loop of
// 12 whose 5th iteration fails; a gang whose rank 1 fails; a gang that
// stalls) and looks at their DAGs in Chromium: a loop is one box holding
// a chip per iteration (a link to it) with the counts per state, edges to
// and from the box; past 10 iterations only the counts until expanded; a
// distributed step's box says its ranks and shows each rank's state.
func TestBrowserDAGGroups(t *testing.T) {
	chromium := uitest.Chromium(t)
	shots := uitest.ShotsDir(t)
	work := t.TempDir()
	pipectl, ids := sweepRuns(t, work, nil,
		[]string{"trials=[1,2,3,4,5,6,7,8,9,10,11,12]", "bad=5"}, []string{"fail=true"}, []string{"stall=true"})
	base := startUI(t, pipectl("ui", "--listen", "127.0.0.1:0"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := uitest.NewPage(t, ctx, chromium, base, shots)

	// A loop of 3: one box, three chips inside it, edges to and from it.
	b.Open("/runs/" + ids[0] + "?step=report")
	b.WaitJS(`document.querySelector('svg.graph g.group[data-node="trial"]')`)
	if got := b.Text(`[...document.querySelectorAll("svg.graph > .node")].map(n => n.dataset.node).sort().join(" ") + " | " + [...document.querySelectorAll("svg.graph path.edge")].map(e => e.dataset.edge).sort().join(" ")`); got != "report train trial | train>trial trial>report" {
		t.Errorf("boxes | edges: %s", got)
	}
	group := `document.querySelector('svg.graph g.group[data-node="trial"]')`
	if got := b.Text(`(g => g.querySelector(".state").textContent + " | " + g.querySelector(".counts").textContent + " | " + [...g.querySelectorAll("a.chip")].map(c => c.dataset.node + "=" + c.dataset.status).join(" "))(` + group + `)`); got != "loop · 3 iterations | 3 succeeded | trial[0]=succeeded trial[1]=succeeded trial[2]=succeeded" {
		t.Errorf("the loop's box: %s", got)
	}
	inside := `(g => { const b = g.querySelector("rect.box").getBoundingClientRect(); return [...g.querySelectorAll("a.chip rect")].every(c => { const r = c.getBoundingClientRect(); return r.width > 5 && r.left >= b.left && r.right <= b.right && r.top >= b.top && r.bottom <= b.bottom; }) ? "inside" : "outside"; })(` + group + `)`
	if got := b.Text(inside); got != "inside" {
		t.Errorf("the iterations' chips are %s the loop's box", got)
	}
	// The gang: its ranks, each succeeded.
	train := `document.querySelector('svg.graph a.node[data-node="train"]')`
	if got := b.Text(`(n => n.querySelector(".ranks").textContent + " | " + [...n.querySelectorAll("rect.rank")].map(r => r.dataset.state).join(" "))(` + train + `)`); got != "2 ranks · 2 nodes × 1 proc | succeeded succeeded" {
		t.Errorf("train's ranks: %s", got)
	}
	b.Shot("dag-loop")
	// A chip opens its iteration.
	b.Do(chromedp.Click(chromedp.CSS(`svg.graph a.chip[data-node="trial[1]"] rect`)))
	b.WaitJS(`document.getElementById("step") && document.getElementById("step").dataset.step === "trial[1]" && document.querySelector('a.chip[data-node="trial[1]"]').classList.contains("selected")`)

	// A loop of 12: folded to its counts, expanded on request.
	b.Open("/runs/" + ids[1])
	b.WaitJS(group)
	if got := b.Text(`(g => g.dataset.iterations + " " + g.querySelectorAll("a.chip").length + " | " + g.querySelector(".counts").textContent + " | " + g.querySelector("a.more").textContent.trim())(` + group + `)`); got != "12 0 | 11 succeeded, 1 failed | ▸ show 12 iterations" {
		t.Errorf("a folded loop: %s", got)
	}
	folded := b.Text(`String(` + group + `.querySelector("rect.box").getBBox().height)`)
	b.Do(chromedp.Click(chromedp.CSS(`svg.graph g.group a.more text`)))
	b.WaitJS(group + ` && ` + group + `.querySelectorAll("a.chip").length === 12`)
	if got := b.Text(`(g => g.querySelector('a.chip[data-node="trial[4]"]').dataset.status + " " + g.querySelectorAll("a.chip.st-succeeded").length + " " + g.querySelector("a.more").textContent.trim())(` + group + `)`); got != "failed 11 ▾ fold" {
		t.Errorf("the expanded loop (trial[4], succeeded chips, link): %s", got)
	}
	if got := b.Text(inside); got != "inside" {
		t.Errorf("expanded, the chips are %s the box (it was %s high)", got, folded)
	}
	b.Shot("dag-loop-expanded")

	// A gang whose rank 1 failed: rank 0 stopped with it; a stalled gang.
	for _, c := range []struct{ run, want string }{
		{ids[2], "Failed | stopped failed | 1 failed"},
		{ids[3], "Failed | stalled stalled | 2 stalled"},
	} {
		b.Open("/runs/" + c.run + "?step=train")
		b.WaitJS(train)
		if got := b.Text(`(n => n.dataset.status + " | " + [...n.querySelectorAll("rect.rank")].map(r => r.dataset.state).join(" ") + " | " + n.querySelector("title").textContent)(` + train + `)`); !strings.HasPrefix(got, strings.Join(strings.Split(c.want, " | ")[:2], " | ")) || !strings.Contains(got, strings.Split(c.want, " | ")[2]) {
			t.Errorf("train of %s: %s, want %s", c.run, got, c.want)
		}
	}
	b.Shot("dag-stalled")
}
