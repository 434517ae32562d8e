package ui

import (
	"fmt"
	"slices"
	"strings"

	"pipectl.dev/pipectl/components/record"
)

// Graph is a run's DAG laid out for drawing: steps in columns by depth (the
// longest chain of dependencies before them), left to right.
type Graph struct {
	Nodes         []Node
	Edges         []Edge
	Width, Height int
}

// Node is one step's box.
type Node struct {
	Name, Status string
	Cached       bool
	// Col is the step's depth; Row its place in the column.
	Col, Row int
	X, Y     int
	// H is the box's height: NodeH, more for a loop's iterations or a
	// gang's ranks.
	H int
	// Loop is set on a loop step: its iterations are drawn inside it.
	Loop *LoopView
	// Ranks is set on a distributed step: its ranks and their states.
	Ranks *RanksView
}

// Edge is an arrow from a step to one that depends on it, as an SVG path.
type Edge struct {
	From, To string
	// Status is the upstream step's status.
	Status string
	Path   string
	// Over says the edge skips columns: it runs in the lane above the
	// nodes, not through the steps between.
	Over bool
}

// Sizes of the drawing, in SVG user units (CSS pixels at scale 1).
const (
	NodeW = 196
	NodeH = 52
	gapX  = 64
	gapY  = 18
	pad   = 10
	// lane is the height of the lane above the nodes that edges skipping
	// columns run in (only when there is one).
	lane = 22
)

// StepInfo is what a run's resolved pipeline says of a step that the
// drawing shows: a finally step is drawn after the others, a loop step
// as a group of its iterations, a distributed one with its ranks.
type StepInfo struct {
	Finally bool
	// Nodes and Procs give a distributed step's ranks (Nodes×Procs).
	Nodes, Procs int
}

// Layout places the steps of a run record. Dependencies on steps the record
// does not have are ignored; a record without dependsOn gives one column.
// Within a column steps keep the record's order, then move towards the
// average row of their dependencies (one barycentre pass), which keeps
// chains straight and crossings few.
func Layout(steps []record.StepRecord) Graph { return LayoutRun(steps, nil, nil) }

// LayoutFinally is Layout for a run whose finally steps (and their loop
// iterations, STEP[i]) finally names: they are drawn after every other
// step, as they run, though nothing links them to those steps.
func LayoutFinally(steps []record.StepRecord, finally map[string]bool) Graph {
	info := map[string]StepInfo{}
	for name := range finally {
		info[name] = StepInfo{Finally: true}
	}
	return LayoutRun(steps, info, nil)
}

// LayoutRun is Layout with what the run's resolved pipeline says of its
// steps (info, by name). A loop step's iterations (STEP[i], when the
// record has STEP) are drawn inside its box, not as boxes of their own;
// past loopFold of them only their count is, unless expand names the loop.
func LayoutRun(steps []record.StepRecord, info map[string]StepInfo, expand map[string]bool) Graph {
	shown, iters := foldLoops(steps)
	finally := map[string]bool{}
	for name, i := range info {
		if i.Finally {
			finally[name] = true
		}
	}
	index := make(map[string]int, len(shown))
	for i, s := range shown {
		index[s.Name] = i
	}
	depth, cols := columnsOf(shown, index, finally)
	columns := orderColumns(shown, index, depth, cols)
	nodes := make([]Node, len(shown))
	for i, s := range shown {
		n := Node{Name: s.Name, Status: s.Status, Cached: s.Cached, H: NodeH}
		if it, ok := iters[s.Name]; ok {
			n.Loop = loopView(it, expand[s.Name])
			n.H = n.Loop.height()
		} else if d := info[s.Name]; d.Nodes > 0 && !s.Cached { // a cache hit ran no ranks
			n.Ranks = ranksView(&shown[i], d.Nodes, max(1, d.Procs))
			n.H = n.Ranks.height()
		}
		nodes[i] = n
	}
	over := func(i, j int) bool { return depth[i]-depth[j] > 1 }
	top0 := pad
	for i, s := range shown {
		for _, dep := range s.DependsOn {
			if j, ok := index[dep]; ok && j != i && over(i, j) {
				top0 = pad + lane
			}
		}
	}
	colH := func(col []int) int {
		h := -gapY
		for _, i := range col {
			h += nodes[i].H + gapY
		}
		return max(h, 0)
	}
	tallest := NodeH
	for _, col := range columns {
		tallest = max(tallest, colH(col))
	}
	g := Graph{Width: max(1, cols)*(NodeW+gapX) - gapX + 2*pad, Height: tallest + pad + top0}
	for c, col := range columns {
		// Centre short columns against the tallest one.
		y := top0 + (tallest-colH(col))/2
		for k, i := range col {
			nodes[i].Col, nodes[i].Row, nodes[i].X, nodes[i].Y = c, k, pad+c*(NodeW+gapX), y
			y += nodes[i].H + gapY
		}
	}
	g.Nodes = nodes
	for i, s := range shown {
		for _, dep := range s.DependsOn {
			j, ok := index[dep]
			if !ok || j == i || depth[j] >= depth[i] {
				continue
			}
			e := Edge{From: dep, To: s.Name, Status: shown[j].Status, Over: over(i, j)}
			e.Path = edgePath(nodes[j], nodes[i], e.Over)
			g.Edges = append(g.Edges, e)
		}
	}
	return g
}

// edgePath is the SVG path of an edge from a to b, between the middles of
// their title rows; over runs it in the lane above the nodes.
func edgePath(a, b Node, over bool) string {
	x1, y1 := a.X+NodeW, a.Y+NodeH/2
	x2, y2 := b.X-4, b.Y+NodeH/2
	if over {
		// Up into the lane in the gap after a, along it, down in the
		// gap before b.
		yl, xa, xb := pad+lane/2, x1+gapX/2, x2-gapX/2
		return fmt.Sprintf("M%d %d C%d %d %d %d %d %d L%d %d C%d %d %d %d %d %d",
			x1, y1, xa, y1, xa, yl, x1+gapX, yl, x2-gapX, yl, xb, yl, xb, y2, x2, y2)
	}
	mx := (x1 + x2) / 2
	return fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mx, y1, mx, y2, x2, y2)
}

// orderColumns puts the steps in their columns (depth), each column in
// record order, then (past the first) by the average row of the steps it
// depends on.
func orderColumns(steps []record.StepRecord, index map[string]int, depth []int, cols int) [][]int {
	columns := make([][]int, cols)
	for i := range steps {
		columns[depth[i]] = append(columns[depth[i]], i)
	}
	row := make([]float64, len(steps))
	for c, col := range columns {
		if c > 0 {
			key := make(map[int]float64, len(col))
			for k, i := range col {
				sum, n := 0.0, 0
				for _, dep := range steps[i].DependsOn {
					if j, ok := index[dep]; ok && depth[j] < c {
						sum += row[j]
						n++
					}
				}
				key[i] = float64(k)
				if n > 0 {
					key[i] = sum / float64(n)
				}
			}
			slices.SortStableFunc(col, func(a, b int) int {
				switch {
				case key[a] < key[b]:
					return -1
				case key[a] > key[b]:
					return 1
				}
				return 0
			})
		}
		for k, i := range col {
			row[i] = float64(k)
		}
	}
	return columns
}

// columnsOf places each step in a column: one after the deepest step it
// depends on; finally steps (finally names them) after every other step.
// It returns each step's column and the number of columns.
func columnsOf(steps []record.StepRecord, index map[string]int, finally map[string]bool) ([]int, int) {
	depth := make([]int, len(steps))
	state := make([]int8, len(steps)) // 0 new, 1 visiting, 2 done
	isFinally := func(i int) bool {
		name, _, _ := strings.Cut(steps[i].Name, "[")
		return finally[name]
	}
	after := 0 // the first column after the other steps, for finally steps
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			return 0 // a cycle: records never have one, but do not loop
		case 2:
			return depth[i]
		}
		state[i] = 1
		d := 0
		if isFinally(i) {
			d = after
		}
		for _, dep := range steps[i].DependsOn {
			if j, ok := index[dep]; ok && j != i {
				d = max(d, visit(j)+1)
			}
		}
		depth[i], state[i] = d, 2
		return d
	}
	cols := 0
	for _, last := range []bool{false, true} {
		after = cols
		for i := range steps {
			if isFinally(i) == last {
				cols = max(cols, visit(i)+1)
			}
		}
	}
	return depth, cols
}
