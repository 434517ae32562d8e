package ui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/record"
)

// Chip is a small square inside a step's box: a loop iteration (a link to
// its page) or a rank of a gang, coloured by its state. X and Y are
// relative to the box.
type Chip struct {
	Name, State, Title string
	Cached             bool
	X, Y               int
}

// LoopView is what a loop step's box shows of its iterations: how many,
// how many in each state, and a chip per iteration, unless there are more
// than loopFold of them and the loop is not expanded.
type LoopView struct {
	N      int
	Counts string
	Chips  []Chip
	// Folded says only the counts are drawn (expanding draws the chips);
	// Expanded that the chips are drawn though there are many (folding
	// hides them). More counts the iterations past maxChips, not drawn.
	Folded, Expanded bool
	More             int
	// LinkY is where the expand or fold link is (0: none).
	LinkY int
}

// RanksView is what a distributed step's box shows of its gang: the ranks
// (nodes × processes), a chip per rank in its state (up to maxRankChips),
// and how many are in each state.
type RanksView struct {
	N      int
	Text   string
	Counts string
	Chips  []Chip
}

// Sizes of a box's chips, below its title and state.
const (
	loopFold     = 10
	maxChips     = 200
	chipsPerRow  = 10
	chipSize     = 14
	chipStep     = 18
	chipsTop     = 64
	maxRankChips = 28
	ranksPerRow  = 14
	rankChip     = 10
	rankStep     = 12
	ranksTop     = 66
)

// Rank states (besides the step statuses, lowered): a rank of a gang
// stopped for another rank's failure, one of a stalled gang.
const (
	rankStopped = "stopped"
	rankStalled = "stalled"
)

// foldLoops splits steps into those drawn as boxes and the iterations of
// each loop step (STEP[i], drawn inside STEP's box; an iteration whose
// loop step the record lacks is a box of its own).
func foldLoops(steps []record.StepRecord) ([]record.StepRecord, map[string][]record.StepRecord) {
	names := make(map[string]bool, len(steps))
	for _, s := range steps {
		names[s.Name] = true
	}
	var shown []record.StepRecord
	iters := map[string][]record.StepRecord{}
	for _, s := range steps {
		if parent, _, ok := strings.Cut(s.Name, "["); ok && names[parent] && strings.HasSuffix(s.Name, "]") {
			iters[parent] = append(iters[parent], s)
			continue
		}
		shown = append(shown, s)
	}
	for name, it := range iters {
		slices.SortStableFunc(it, func(a, b record.StepRecord) int { return iterIndex(a.Name) - iterIndex(b.Name) })
		iters[name] = it
	}
	return shown, iters
}

// iterIndex is i of STEP[i] (0 when it is not a number).
func iterIndex(name string) int {
	_, rest, _ := strings.Cut(name, "[")
	i, _ := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	return i
}

// loopView lays out the iterations of a loop step.
func loopView(iters []record.StepRecord, expand bool) *LoopView {
	v := &LoopView{N: len(iters)}
	counts := map[string]int{}
	for _, it := range iters {
		counts[it.Status]++
	}
	v.Counts = record.CountStatuses(counts)
	if v.N > loopFold && !expand {
		v.Folded, v.LinkY = true, chipsTop+10
		return v
	}
	v.Expanded = v.N > loopFold
	for i, it := range iters {
		if i == maxChips {
			v.More = v.N - i
			break
		}
		title := it.Name + ": " + it.Status
		if len(it.Item) > 0 {
			title = it.Name + " (item " + string(it.Item) + "): " + it.Status
		}
		v.Chips = append(v.Chips, Chip{Name: it.Name, State: strings.ToLower(it.Status), Title: title, Cached: it.Cached,
			X: 16 + (i%chipsPerRow)*chipStep, Y: chipsTop + (i/chipsPerRow)*chipStep})
	}
	if v.Expanded || v.More > 0 {
		v.LinkY = chipsTop + rows(len(v.Chips), chipsPerRow)*chipStep + 10
	}
	return v
}

// height is the height of a loop step's box.
func (v *LoopView) height() int {
	h := chipsTop + rows(len(v.Chips), chipsPerRow)*chipStep
	if v.LinkY > 0 {
		h = v.LinkY + 4
	}
	return max(h+4, NodeH)
}

func rows(n, perRow int) int { return (n + perRow - 1) / perRow }

// ranksView lays out the ranks of a distributed step of nodes × procs.
func ranksView(st *record.StepRecord, nodes, procs int) *RanksView {
	n := nodes * procs
	v := &RanksView{N: n, Text: fmt.Sprintf("%d %s · %d %s × %d %s", n, plural(n, "rank"), nodes, plural(nodes, "node"), procs, plural(procs, "proc"))}
	states := rankStates(st, n)
	counts := map[string]int{}
	var order []string
	for r, state := range states {
		if counts[state] == 0 {
			order = append(order, state)
		}
		counts[state]++
		if n <= maxRankChips {
			v.Chips = append(v.Chips, Chip{Name: fmt.Sprintf("rank %d", r), State: state, Title: fmt.Sprintf("rank %d: %s", r, state),
				X: 16 + (r%ranksPerRow)*rankStep, Y: ranksTop + (r/ranksPerRow)*rankStep})
		}
	}
	var parts []string
	for _, state := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[state], state))
	}
	v.Counts = strings.Join(parts, ", ")
	return v
}

// height is the height of a distributed step's box.
func (v *RanksView) height() int {
	if len(v.Chips) == 0 {
		return ranksTop + 14 // the counts, on a line of their own
	}
	return ranksTop + rows(len(v.Chips), ranksPerRow)*rankStep + 4
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// rankRE finds the rank a gang's failure names ("rank 1: exit code 3",
// "rank 1 failed: …").
var rankRE = regexp.MustCompile(`\brank (\d+)\b`)

// rankStates are the states of a gang's n ranks as the step's record
// tells them: all the step's status while it runs, succeeded or never
// ran; when it failed, the rank its last gang attempt names failed (the
// others stopped with it), every rank of a stalled attempt stalled.
func rankStates(st *record.StepRecord, n int) []string {
	all := func(state string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = state
		}
		return out
	}
	switch st.Status {
	case record.StatusFailed:
	case record.StatusCancelled:
		return all(rankStopped)
	case record.StatusSkipped:
		return all(strings.ToLower(record.StatusPending))
	default:
		return all(strings.ToLower(st.Status))
	}
	msg := st.Message
	if k := len(st.GangAttempts); k > 0 {
		last := st.GangAttempts[k-1]
		if last.Reason == record.ReasonStalled {
			return all(rankStalled)
		}
		msg = last.Message
	}
	out := all(strings.ToLower(record.StatusFailed))
	if m := rankRE.FindStringSubmatch(msg); m != nil {
		if r, err := strconv.Atoi(m[1]); err == nil && r < n {
			out = all(rankStopped)
			out[r] = strings.ToLower(record.StatusFailed)
		}
	}
	return out
}
