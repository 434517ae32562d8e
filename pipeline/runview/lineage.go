package runview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// MaxLineageDepth bounds how many producers back a lineage goes.
const MaxLineageDepth = 32

// MaxLineageProducers bounds how many producers one lineage traces: past
// it, a producer's inputs are listed without their own lineage.
const MaxLineageProducers = 10000

// Lineage is how an output came to be, as `pipectl artifacts lineage`
// shows it: the step that produced it, that step's code, image and its
// run's params, and each input artifact it read with that input's own
// lineage. Its fields are stable.
type Lineage struct {
	Run    string `json:"run"`
	Step   string `json:"step"`
	Output string `json:"output"`
	URI    string `json:"uri,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// ReusedIn lists the runs, newest first, whose step reused this output
	// (cached) on the way from the output asked about to its producer.
	ReusedIn []string          `json:"reusedIn,omitempty"`
	Code     string            `json:"code,omitempty"`
	Image    string            `json:"image,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	// Inputs are the input artifacts the step read; nil with Note when
	// they were not recorded.
	Inputs []LineageInput `json:"inputs"`
	Note   string         `json:"note,omitempty"`
	// Checkpoint is the producing step's latest checkpoint in its run (a
	// distributed step's), which is not part of its fingerprint.
	Checkpoint *checkpoint.Summary `json:"checkpoint,omitempty"`
	// Seen is set on a producer this lineage already traced, whose
	// code, params and inputs are not repeated: "above" where it was
	// traced, or "cycle" when it is its own ancestor (records altered by
	// hand: a run cannot read what it has not made yet).
	Seen string `json:"seen,omitempty"`
}

// LineageInput is one input artifact of a step: where it was read from,
// and its producer's lineage (nil when it is not an output of a run).
type LineageInput struct {
	Name   string   `json:"name"`
	URI    string   `json:"uri"`
	SHA256 string   `json:"sha256,omitempty"`
	From   *Lineage `json:"from,omitempty"`
}

// TraceLineage traces output of step of run back through the steps that
// produced what it read, up to MaxLineageDepth producers back and
// MaxLineageProducers in all; get reads a run's record. Each producer is
// traced once, however many steps read it (the walk is linear in the
// producers, not in the paths to them): where it comes again it is a
// reference (Seen), and a cycle in altered records ends in one too.
func TraceLineage(ctx context.Context, s artifacts.Store, get func(ctx context.Context, id string) (*record.Run, error), run, step, output string) (*Lineage, error) {
	t := &tracer{s: s, get: get, runs: map[string]*record.Run{}, nodes: map[lineageKey]*traced{}}
	root := lineageKey{run, step, output}
	n, err := t.visit(ctx, root)
	if err != nil {
		return nil, err
	}
	t.nodes[root] = n
	// Breadth first, so that each producer is traced at its least depth.
	for level, depth := []*traced{n}, 0; len(level) > 0 && depth < MaxLineageDepth; depth++ {
		var next []*traced
		for _, n := range level {
			for _, k := range n.from {
				if k == nil {
					continue
				}
				if _, done := t.nodes[*k]; done {
					continue
				}
				if len(t.nodes) >= MaxLineageProducers {
					n.l.Note = fmt.Sprintf("the lineage stops here: it traced %d producers", MaxLineageProducers)
					break
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := t.visit(ctx, *k)
				t.nodes[*k] = p // nil: the producer's record is gone, the input stands alone
				if err == nil {
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return t.emit(root, map[lineageKey]bool{}, map[lineageKey]bool{}), nil
}

// lineageKey names one output: RUN/STEP/OUTPUT.
type lineageKey struct{ run, step, output string }

// traced is one producer's lineage, without its inputs' producers, and
// the key of each input's producer (nil when it is not a run's output).
type traced struct {
	l    *Lineage
	from []*lineageKey
}

type tracer struct {
	s     artifacts.Store
	get   func(context.Context, string) (*record.Run, error)
	runs  map[string]*record.Run
	nodes map[lineageKey]*traced
}

// record reads run's record once.
func (t *tracer) record(ctx context.Context, run string) (*record.Run, error) {
	if r, ok := t.runs[run]; ok {
		return r, nil
	}
	r, err := t.get(ctx, run)
	if err != nil {
		return nil, err
	}
	t.runs[run] = r
	return r, nil
}

// visit reads the producer of k (through the runs that reused it) and
// the inputs its step read.
func (t *tracer) visit(ctx context.Context, k lineageKey) (*traced, error) {
	run, step, output := k.run, k.step, k.output
	l := &Lineage{Output: output}
	var rec *record.Run
	var st *record.StepRecord
	for hops := 0; ; hops++ {
		var err error
		if rec, err = t.record(ctx, run); err != nil {
			return nil, err
		}
		if st = rec.Step(step); st == nil {
			return nil, fmt.Errorf("run %s has no step %q", run, step)
		}
		if !st.Cached || st.CachedFrom == "" || st.CachedFrom == run || hops >= MaxLineageDepth {
			break
		}
		l.ReusedIn = append(l.ReusedIn, run)
		run = st.CachedFrom
	}
	l.Run, l.Step, l.Code, l.Image, l.Params = rec.ID, step, st.Code, st.Image, rec.Params
	found := false
	for _, o := range st.Outputs {
		if o.Name == output {
			l.URI, l.SHA256, found = o.URI, o.SHA256, true
		}
	}
	if !found {
		return nil, fmt.Errorf("step %s of run %s has no output %q", step, rec.ID, output)
	}
	n := &traced{l: l}
	ckpt, err := checkpoint.Latest(ctx, t.s, rec.ID, step)
	if err != nil {
		return nil, fmt.Errorf("checkpoint of step %s of run %s: %w", step, rec.ID, err)
	}
	l.Checkpoint = ckpt
	in, err := recordstore.ReadInputs(ctx, t.s, rec.ID, step)
	if errors.Is(err, artifacts.ErrNotFound) {
		l.Note = "its inputs were not recorded (a run from before pipectl recorded them, or a step that did not run)"
		return n, nil
	}
	if err != nil {
		return nil, err
	}
	l.Inputs = []LineageInput{}
	for _, i := range in.Inputs {
		l.Inputs = append(l.Inputs, LineageInput{Name: i.Name, URI: i.URI, SHA256: i.SHA256})
		var from *lineageKey
		if key, err := artifacts.SplitURI(t.s, i.URI); err == nil {
			if parts := strings.Split(key, "/"); len(parts) == 3 {
				from = &lineageKey{parts[0], parts[1], parts[2]}
			}
		}
		n.from = append(n.from, from)
	}
	return n, nil
}

// emit builds the tree of k: a producer in full where it first comes (depth
// first), a reference where it comes again, so the tree is as large as the
// producers traced, not as the paths to them.
func (t *tracer) emit(k lineageKey, shown, onPath map[lineageKey]bool) *Lineage {
	n := t.nodes[k]
	if shown[k] {
		seen := "above"
		if onPath[k] {
			seen = "cycle"
		}
		return &Lineage{Run: n.l.Run, Step: n.l.Step, Output: n.l.Output, URI: n.l.URI, SHA256: n.l.SHA256, Seen: seen}
	}
	shown[k], onPath[k] = true, true
	defer delete(onPath, k)
	l := *n.l
	l.Inputs = slices.Clone(n.l.Inputs)
	for i, from := range n.from {
		if from != nil && t.nodes[*from] != nil {
			l.Inputs[i].From = t.emit(*from, shown, onPath)
		}
	}
	return &l
}

// HasCycle reports whether l holds a producer that is its own ancestor.
func HasCycle(l *Lineage) bool {
	if l.Seen == "cycle" {
		return true
	}
	for _, in := range l.Inputs {
		if in.From != nil && HasCycle(in.From) {
			return true
		}
	}
	return false
}

// WriteLineage writes l as an indented tree.
func WriteLineage(w io.Writer, l *Lineage) {
	writeLineage(w, l, "")
}

func writeLineage(w io.Writer, l *Lineage, indent string) {
	fmt.Fprintf(w, "%s%s/%s/%s  sha256 %s\n", indent, l.Run, l.Step, l.Output, orDash(l.SHA256))
	switch l.Seen {
	case "above":
		fmt.Fprintf(w, "%s  (traced above)\n", indent)
		return
	case "cycle":
		fmt.Fprintf(w, "%s  (a cycle: this output is its own ancestor; these run records were altered)\n", indent)
		return
	}
	if len(l.ReusedIn) > 0 {
		fmt.Fprintf(w, "%s  reused by run(s) %s\n", indent, strings.Join(l.ReusedIn, ", "))
	}
	fmt.Fprintf(w, "%s  step %s of run %s: code %s, image %s\n", indent, l.Step, l.Run, orDash(l.Code), orDash(l.Image))
	if len(l.Params) > 0 {
		fmt.Fprintf(w, "%s  params: %s\n", indent, params(l.Params))
	}
	if c := l.Checkpoint; c != nil {
		fmt.Fprintf(w, "%s  checkpoint %d (%d file(s), %d bytes, %s; not part of the fingerprint): %s\n", indent, c.Generation, c.Files, c.Size, c.Created.UTC().Format(time.DateTime+"Z"), c.URI)
	}
	if l.Note != "" {
		fmt.Fprintf(w, "%s  %s\n", indent, l.Note)
	}
	for _, in := range l.Inputs {
		fmt.Fprintf(w, "%s  input %s ← %s  sha256 %s\n", indent, in.Name, in.URI, orDash(in.SHA256))
		if in.From != nil {
			writeLineage(w, in.From, indent+"    ")
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// params is "k=v k2=v2", keys sorted.
func params(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}
