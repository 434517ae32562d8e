package runview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// lineageStore is a store of n runs: each run's step use read run r0's
// output make/text (run r0 made it; the others reused make) and wrote
// use/out.
func lineageStore(tb testing.TB, n int) (artifacts.Store, func(context.Context, string) (*record.Run, error)) {
	ctx := context.Background()
	s, err := artifacts.NewLocal(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	text := record.OutputRecord{Name: "text", Type: "Dataset", URI: s.URI("r0/make/text"), SHA256: strings.Repeat("a", 64)}
	recs := map[string]*record.Run{}
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		mk := record.StepRecord{Name: "make", Status: record.StatusSucceeded, Code: "sha256:m", Outputs: []record.OutputRecord{text}}
		if i > 0 {
			mk.Cached, mk.CachedFrom = true, "r0"
		}
		use := record.StepRecord{Name: "use", Status: record.StatusSucceeded, Code: "sha256:u",
			Outputs: []record.OutputRecord{{Name: "out", Type: "Dataset", URI: s.URI(id + "/use/out"), SHA256: fmt.Sprintf("%064x", i+1)}}}
		recs[id] = &record.Run{ID: id, Params: map[string]string{"i": fmt.Sprint(i)}, Steps: []record.StepRecord{mk, use}}
		if err := recordstore.WriteInputs(ctx, s, record.StepInputs{Run: id, Step: "use", Inputs: []record.InputRecord{{Name: "text", URI: text.URI, SHA256: text.SHA256}}}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := recordstore.WriteInputs(ctx, s, record.StepInputs{Run: "r0", Step: "make"}); err != nil {
		tb.Fatal(err)
	}
	get := func(_ context.Context, id string) (*record.Run, error) {
		if r, ok := recs[id]; ok {
			return r, nil
		}
		return nil, fmt.Errorf("no run %q: %w", id, artifacts.ErrNotFound)
	}
	return s, get
}

// TestTraceLineage: the output's producer, its input's producer through the
// run that reused it, and the consumers of that input's content.
func TestTraceLineage(t *testing.T) {
	s, get := lineageStore(t, 3)
	l, err := TraceLineage(t.Context(), s, get, "r2", "use", "out")
	if err != nil {
		t.Fatal(err)
	}
	if l.Run != "r2" || l.Params["i"] != "2" || len(l.Inputs) != 1 || l.Inputs[0].From == nil {
		t.Fatalf("lineage = %+v", l)
	}
	if from := l.Inputs[0].From; from.Run != "r0" || from.Step != "make" || from.Code != "sha256:m" || from.Inputs == nil || len(from.Inputs) != 0 {
		t.Errorf("input's producer = %+v, want step make of r0 with no inputs", from)
	}
	m, err := TraceLineage(t.Context(), s, get, "r1", "make", "text")
	if err != nil || m.Run != "r0" || len(m.ReusedIn) != 1 || m.ReusedIn[0] != "r1" {
		t.Errorf("make of r1 = %+v, %v; want r0's, reused in r1", m, err)
	}
	users, err := recordstore.ListConsumers(t.Context(), s, strings.Repeat("a", 64))
	if err != nil || len(users) != 3 || users[0] != (record.Consumer{Run: "r0", Step: "use"}) {
		t.Errorf("consumers = %v, %v; want use of r0, r1, r2", users, err)
	}
	if _, err := TraceLineage(t.Context(), s, get, "r2", "use", "nope"); err == nil {
		t.Error("an output the step does not have: no error")
	}
}

// BenchmarkLineage1000: lineage and --used-by on a store of 1,000 runs.
func BenchmarkLineage1000(b *testing.B) {
	s, get := lineageStore(b, 1000)
	b.Run("trace", func(b *testing.B) {
		for b.Loop() {
			if _, err := TraceLineage(b.Context(), s, get, "r999", "use", "out"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("used-by", func(b *testing.B) {
		for b.Loop() {
			if u, err := recordstore.ListConsumers(b.Context(), s, strings.Repeat("a", 64)); err != nil || len(u) != 1000 {
				b.Fatal(len(u), err)
			}
		}
	})
}

// countingStore counts the inputs records read, and fails every read past
// budget (so a walk that would not end, ends).
type countingStore struct {
	artifacts.Store
	inputs, budget int
}

func (c *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasSuffix(key, "/inputs.json") {
		if c.inputs++; c.inputs > c.budget {
			return nil, errors.New("read budget spent")
		}
	}
	return c.Store.Get(ctx, key)
}

// chainStore is run c of n steps s0…s(n-1), each step after the first
// reading s(i-1)'s output twice (inputs a and b): 2^i paths back to s0.
func chainStore(t *testing.T, n int) (*countingStore, func(context.Context, string) (*record.Run, error), *int) {
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Run{ID: "c"}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		rec.Steps = append(rec.Steps, record.StepRecord{Name: name, Status: record.StatusSucceeded,
			Outputs: []record.OutputRecord{{Name: "out", URI: s.URI("c/" + name + "/out"), SHA256: fmt.Sprintf("%064x", i+1)}}})
		in := record.StepInputs{Run: "c", Step: name}
		if i > 0 {
			prev := s.URI(fmt.Sprintf("c/s%d/out", i-1))
			in.Inputs = []record.InputRecord{{Name: "a", URI: prev}, {Name: "b", URI: prev}}
		}
		if err := recordstore.WriteInputs(t.Context(), s, in); err != nil {
			t.Fatal(err)
		}
	}
	gets := 0
	get := func(_ context.Context, id string) (*record.Run, error) {
		gets++
		if id != "c" {
			return nil, artifacts.ErrNotFound
		}
		return rec, nil
	}
	return &countingStore{Store: s, budget: 10000}, get, &gets
}

// TestLineageLinear: a 200-step chain where each step reads the one before
// twice is traced reading each producer's inputs once (the walk that
// followed every path read 2^32 of them) and one record; the second path
// to a producer is a reference.
func TestLineageLinear(t *testing.T) {
	s, get, gets := chainStore(t, 200)
	l, err := TraceLineage(t.Context(), s, get, "c", "s199", "out")
	if err != nil {
		t.Fatal(err)
	}
	if want := MaxLineageDepth + 1; s.inputs != want || *gets != 1 {
		t.Errorf("read %d inputs records and %d run records, want %d and 1", s.inputs, *gets, want)
	}
	if len(l.Inputs) != 2 || l.Inputs[0].From == nil || l.Inputs[0].From.Step != "s198" || l.Inputs[0].From.Seen != "" ||
		l.Inputs[1].From == nil || l.Inputs[1].From.Seen != "above" || l.Inputs[1].From.Inputs != nil {
		t.Fatalf("inputs = %+v, want s198 traced in full, then a reference to it", l.Inputs)
	}
	var b strings.Builder
	WriteLineage(&b, l)
	if lines := strings.Count(b.String(), "\n"); lines > 8*(MaxLineageDepth+1) {
		t.Errorf("the tree has %d lines for %d producers", lines, MaxLineageDepth+1)
	}
	if HasCycle(l) {
		t.Error("a chain reported as a cycle")
	}
}

// TestLineageCycle: altered records where run a's step read run b's
// output and b's read a's end in a reference marked "cycle", after
// reading each once.
func TestLineageCycle(t *testing.T) {
	base, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &countingStore{Store: base, budget: 10000}
	recs := map[string]*record.Run{}
	for id, other := range map[string]string{"a": "b", "b": "a"} {
		recs[id] = &record.Run{ID: id, Steps: []record.StepRecord{{Name: "s", Status: record.StatusSucceeded,
			Outputs: []record.OutputRecord{{Name: "out", URI: s.URI(id + "/s/out")}}}}}
		in := record.StepInputs{Run: id, Step: "s", Inputs: []record.InputRecord{{Name: "in", URI: s.URI(other + "/s/out")}}}
		if err := recordstore.WriteInputs(t.Context(), s, in); err != nil {
			t.Fatal(err)
		}
	}
	get := func(_ context.Context, id string) (*record.Run, error) { return recs[id], nil }
	l, err := TraceLineage(t.Context(), s, get, "a", "s", "out")
	if err != nil {
		t.Fatal(err)
	}
	b := l.Inputs[0].From
	if b == nil || b.Run != "b" || len(b.Inputs) != 1 || b.Inputs[0].From == nil || b.Inputs[0].From.Seen != "cycle" || !HasCycle(l) {
		t.Fatalf("lineage = %+v, want a ← b ← a marked as a cycle", l)
	}
	if s.inputs != 2 {
		t.Errorf("read %d inputs records, want 2", s.inputs)
	}
	var out strings.Builder
	WriteLineage(&out, l)
	if !strings.Contains(out.String(), "a cycle") {
		t.Errorf("the tree does not say there is a cycle:\n%s", out.String())
	}
}
