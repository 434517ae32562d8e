package runview

import (
	"context"
	"fmt"
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
