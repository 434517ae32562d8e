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

// Layout places the steps of a run record. Dependencies on steps the record
// does not have are ignored; a record without dependsOn gives one column.
// Within a column steps keep the record's order, then move towards the
// average row of their dependencies (one barycentre pass), which keeps
// chains straight and crossings few.
func Layout(steps []record.StepRecord) Graph { return LayoutFinally(steps, nil) }

// LayoutFinally is Layout for a run whose finally steps (and their loop
// iterations, STEP[i]) finally names: they are drawn after every other
// step, as they run, though nothing links them to those steps.
func LayoutFinally(steps []record.StepRecord, finally map[string]bool) Graph {
	index := make(map[string]int, len(steps))
	for i, s := range steps {
		index[s.Name] = i
	}
	depth, cols := columnsOf(steps, index, finally)
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
	tallest := 0
	for _, col := range columns {
		tallest = max(tallest, len(col))
	}
	over := func(i, j int) bool { return depth[i]-depth[j] > 1 }
	top0 := pad
	for i, s := range steps {
		for _, dep := range s.DependsOn {
			if j, ok := index[dep]; ok && j != i && over(i, j) {
				top0 = pad + lane
			}
		}
	}
	g := Graph{
		Width:  max(1, cols)*(NodeW+gapX) - gapX + 2*pad,
		Height: max(1, tallest)*(NodeH+gapY) - gapY + pad + top0,
	}
	pos := make([]Node, len(steps))
	for c, col := range columns {
		// Centre short columns against the tallest one.
		top := top0 + (tallest-len(col))*(NodeH+gapY)/2
		for k, i := range col {
			s := steps[i]
			pos[i] = Node{Name: s.Name, Status: s.Status, Cached: s.Cached, Col: c, Row: k,
				X: pad + c*(NodeW+gapX), Y: top + k*(NodeH+gapY)}
		}
	}
	g.Nodes = pos
	for i, s := range steps {
		for _, dep := range s.DependsOn {
			j, ok := index[dep]
			if !ok || j == i || depth[j] >= depth[i] {
				continue
			}
			a, b := pos[j], pos[i]
			x1, y1 := a.X+NodeW, a.Y+NodeH/2
			x2, y2 := b.X-4, b.Y+NodeH/2
			e := Edge{From: dep, To: s.Name, Status: steps[j].Status, Over: over(i, j)}
			if e.Over {
				// Up into the lane in the gap after a, along it, down in the
				// gap before b.
				yl, xa, xb := pad+lane/2, x1+gapX/2, x2-gapX/2
				e.Path = fmt.Sprintf("M%d %d C%d %d %d %d %d %d L%d %d C%d %d %d %d %d %d",
					x1, y1, xa, y1, xa, yl, x1+gapX, yl, x2-gapX, yl, xb, yl, xb, y2, x2, y2)
			} else {
				mx := (x1 + x2) / 2
				e.Path = fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mx, y1, mx, y2, x2, y2)
			}
			g.Edges = append(g.Edges, e)
		}
	}
	return g
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
