package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/record"
)

func steps(deps ...[]string) []record.StepRecord {
	out := make([]record.StepRecord, len(deps))
	for i, d := range deps {
		out[i] = record.StepRecord{Name: string(rune('a' + i)), Status: record.StatusPending, DependsOn: d}
	}
	return out
}

type place struct{ Col, Row int }

func TestLayout(t *testing.T) {
	cases := []struct {
		name  string
		steps []record.StepRecord
		want  map[string]place
		edges int
	}{
		{"chain", steps(nil, []string{"a"}, []string{"b"}),
			map[string]place{"a": {0, 0}, "b": {1, 0}, "c": {2, 0}}, 2},
		{"diamond", steps(nil, []string{"a"}, []string{"a"}, []string{"b", "c"}),
			map[string]place{"a": {0, 0}, "b": {1, 0}, "c": {1, 1}, "d": {2, 0}}, 4},
		{"depth is the longest chain", steps(nil, []string{"a"}, []string{"a", "b"}),
			map[string]place{"a": {0, 0}, "b": {1, 0}, "c": {2, 0}}, 3},
		{"no dependencies: one column in record order", steps(nil, nil, nil),
			map[string]place{"a": {0, 0}, "b": {0, 1}, "c": {0, 2}}, 0},
		{"unknown and self dependencies are ignored", steps([]string{"zz"}, []string{"b", "a"}),
			map[string]place{"a": {0, 0}, "b": {1, 0}}, 1},
		{"a cycle does not loop", steps([]string{"b"}, []string{"a"}),
			map[string]place{"a": {2, 0}, "b": {1, 0}}, 1},
		{"barycentre: children follow their parents' order", steps(nil, nil, []string{"b"}, []string{"a"}),
			map[string]place{"a": {0, 0}, "b": {0, 1}, "c": {1, 1}, "d": {1, 0}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Layout(c.steps)
			got := map[string]place{}
			for _, n := range g.Nodes {
				got[n.Name] = place{n.Col, n.Row}
				if n.X < 0 || n.Y < 0 || n.X+NodeW > g.Width || n.Y+NodeH > g.Height {
					t.Errorf("node %s at (%d,%d) outside the %dx%d drawing", n.Name, n.X, n.Y, g.Width, g.Height)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("places (-want +got):\n%s", diff)
			}
			if len(g.Edges) != c.edges {
				t.Errorf("%d edges, want %d: %+v", len(g.Edges), c.edges, g.Edges)
			}
		})
	}
}

func TestLayoutEmpty(t *testing.T) {
	g := Layout(nil)
	if len(g.Nodes) != 0 || g.Width <= 0 || g.Height <= 0 {
		t.Errorf("Layout(nil) = %+v", g)
	}
}

// An edge skipping columns runs in a lane above every node, not through
// the steps between; without one there is no lane.
func TestLayoutLane(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []record.StepRecord
		over  map[string]bool
		top   int
	}{
		{"chain", steps(nil, []string{"a"}, []string{"b"}), map[string]bool{"a>b": false, "b>c": false}, pad},
		{"a skip edge", steps(nil, []string{"a"}, []string{"a", "b"}), map[string]bool{"a>b": false, "a>c": true, "b>c": false}, pad + lane},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := Layout(c.steps)
			over := map[string]bool{}
			for _, e := range g.Edges {
				over[e.From+">"+e.To] = e.Over
			}
			if diff := cmp.Diff(c.over, over); diff != "" {
				t.Errorf("edges over the lane (-want +got):\n%s", diff)
			}
			for _, n := range g.Nodes {
				if n.Y != c.top || n.Y+NodeH > g.Height {
					t.Errorf("node %s at y %d in a drawing %d high, want y %d", n.Name, n.Y, g.Height, c.top)
				}
			}
		})
	}
}

// TestLayoutFinally: finally steps, which depend on nothing, are drawn
// after every other step (not in the first column, as if they ran first);
// a finally step after another finally step comes after it; their loop
// iterations (STEP[i]) too.
func TestLayoutFinally(t *testing.T) {
	ss := steps(nil, []string{"a"}, nil, []string{"c"})
	ss = append(ss, record.StepRecord{Name: "e[0]"}, record.StepRecord{Name: "e[1]"})
	g := LayoutFinally(ss, map[string]bool{"c": true, "d": true, "e": true})
	got := map[string]place{}
	for _, n := range g.Nodes {
		got[n.Name] = place{n.Col, n.Row}
	}
	want := map[string]place{"a": {0, 0}, "b": {1, 0}, "c": {2, 0}, "e[0]": {2, 1}, "e[1]": {2, 2}, "d": {3, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(g.Edges) != 2 {
		t.Errorf("edges %v: want a→b and c→d only (a finally step waits for the run, not a step)", g.Edges)
	}
	if g := Layout(ss); g.Nodes[2].Col != 0 {
		t.Errorf("without the finally steps named, c has no dependencies: column %d", g.Nodes[2].Col)
	}
}

// TestLayoutLoopGroup: a loop step's iterations are drawn inside its box
// (taller for them), not as boxes; edges go to and from the loop step;
// past loopFold iterations only the counts are drawn until expanded.
func TestLayoutLoopGroup(t *testing.T) {
	ss := steps(nil, []string{"a"}, []string{"b"})
	for i := range 3 {
		ss = append(ss, record.StepRecord{Name: fmt.Sprintf("b[%d]", i), Status: record.StatusSucceeded, DependsOn: []string{"a"}})
	}
	ss[4].Status = record.StatusFailed
	g := LayoutRun(ss, nil, nil)
	var names []string
	for _, n := range g.Nodes {
		names = append(names, n.Name)
		if n.Y+n.H > g.Height {
			t.Errorf("node %s ends at %d in a drawing %d high", n.Name, n.Y+n.H, g.Height)
		}
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("boxes (-want +got):\n%s", diff)
	}
	b := g.Nodes[1]
	if b.Loop == nil || b.Loop.N != 3 || len(b.Loop.Chips) != 3 || b.Loop.Counts != "2 succeeded, 1 failed" || b.Loop.Chips[1].State != "failed" || b.H <= NodeH {
		t.Errorf("the loop's box: %+v (height %d)", b.Loop, b.H)
	}
	for _, c := range b.Loop.Chips {
		if c.X < 0 || c.X+chipSize > NodeW || c.Y+chipSize > b.H {
			t.Errorf("chip %s at (%d,%d) outside the %dx%d box", c.Name, c.X, c.Y, NodeW, b.H)
		}
	}
	if len(g.Edges) != 2 || g.Edges[0].From+">"+g.Edges[0].To != "a>b" || g.Edges[1].From+">"+g.Edges[1].To != "b>c" {
		t.Errorf("edges %+v", g.Edges)
	}
	for i := 3; i < 25; i++ {
		ss = append(ss, record.StepRecord{Name: fmt.Sprintf("b[%d]", i), Status: record.StatusRunning})
	}
	folded := LayoutRun(ss, nil, nil).Nodes[1]
	open := LayoutRun(ss, nil, map[string]bool{"b": true}).Nodes[1]
	if !folded.Loop.Folded || len(folded.Loop.Chips) != 0 || folded.Loop.Counts != "2 succeeded, 1 failed, 22 running" {
		t.Errorf("25 iterations, folded: %+v", folded.Loop)
	}
	if open.Loop.Folded || !open.Loop.Expanded || len(open.Loop.Chips) != 25 || open.H <= folded.H || open.Loop.LinkY >= open.H {
		t.Errorf("25 iterations, expanded: %+v (height %d, folded %d)", open.Loop, open.H, folded.H)
	}
}

// TestRankStates: what a gang's ranks show from the step's record.
func TestRankStates(t *testing.T) {
	for _, c := range []struct {
		name string
		st   record.StepRecord
		want string
	}{
		{"running", record.StepRecord{Status: record.StatusRunning}, "running running running"},
		{"succeeded", record.StepRecord{Status: record.StatusSucceeded}, "succeeded succeeded succeeded"},
		{"skipped", record.StepRecord{Status: record.StatusSkipped}, "pending pending pending"},
		{"a rank failed", record.StepRecord{Status: record.StatusFailed, GangAttempts: []record.GangAttempt{
			{Reason: record.ReasonStalled}, {Reason: record.ReasonFailed, Message: "rank 2: exit code 3"}}}, "stopped stopped failed"},
		{"stalled", record.StepRecord{Status: record.StatusFailed, GangAttempts: []record.GangAttempt{{Reason: record.ReasonStalled}}}, "stalled stalled stalled"},
		{"no rank named", record.StepRecord{Status: record.StatusFailed, Message: "timeout"}, "failed failed failed"},
		{"a rank out of range", record.StepRecord{Status: record.StatusFailed, Message: "rank 7: exit code 1"}, "failed failed failed"},
	} {
		if got := strings.Join(rankStates(&c.st, 3), " "); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	v := ranksView(&record.StepRecord{Status: record.StatusRunning}, 8, 8)
	if v.Text != "64 ranks · 8 nodes × 8 procs" || len(v.Chips) != 0 || v.Counts != "64 running" {
		t.Errorf("64 ranks: %+v", v)
	}
}
