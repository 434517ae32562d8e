package runview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// MaxLineageDepth bounds how many producers back a lineage goes.
const MaxLineageDepth = 32

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
// produced what it read, up to MaxLineageDepth producers; get reads a
// run's record.
func TraceLineage(ctx context.Context, s artifacts.Store, get func(ctx context.Context, id string) (*record.Run, error), run, step, output string) (*Lineage, error) {
	return trace(ctx, s, get, run, step, output, 0)
}

func trace(ctx context.Context, s artifacts.Store, get func(context.Context, string) (*record.Run, error), run, step, output string, depth int) (*Lineage, error) {
	l := &Lineage{Output: output}
	var rec *record.Run
	var st *record.StepRecord
	for hops := 0; ; hops++ {
		var err error
		if rec, err = get(ctx, run); err != nil {
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
	in, err := recordstore.ReadInputs(ctx, s, rec.ID, step)
	if errors.Is(err, artifacts.ErrNotFound) {
		l.Note = "its inputs were not recorded (a run from before pipectl recorded them, or a step that did not run)"
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	l.Inputs = []LineageInput{}
	for _, i := range in.Inputs {
		li := LineageInput{Name: i.Name, URI: i.URI, SHA256: i.SHA256}
		if key, err := artifacts.SplitURI(s, i.URI); err == nil && depth < MaxLineageDepth {
			if parts := strings.Split(key, "/"); len(parts) == 3 {
				if li.From, err = trace(ctx, s, get, parts[0], parts[1], parts[2], depth+1); err != nil {
					li.From = nil // the producer's record is gone: the input stands alone
				}
			}
		}
		l.Inputs = append(l.Inputs, li)
	}
	return l, nil
}

// WriteLineage writes l as an indented tree.
func WriteLineage(w io.Writer, l *Lineage) {
	writeLineage(w, l, "")
}

func writeLineage(w io.Writer, l *Lineage, indent string) {
	fmt.Fprintf(w, "%s%s/%s/%s  sha256 %s\n", indent, l.Run, l.Step, l.Output, orDash(l.SHA256))
	if len(l.ReusedIn) > 0 {
		fmt.Fprintf(w, "%s  reused by run(s) %s\n", indent, strings.Join(l.ReusedIn, ", "))
	}
	fmt.Fprintf(w, "%s  step %s of run %s: code %s, image %s\n", indent, l.Step, l.Run, orDash(l.Code), orDash(l.Image))
	if len(l.Params) > 0 {
		fmt.Fprintf(w, "%s  params: %s\n", indent, params(l.Params))
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
