package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/record"
)

func TestParseLine(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		line   string
		step   *int64
		values map[string]float64
		err    string
	}{
		{line: `{"step": 120, "epoch": 2, "loss": 0.41}`, step: i(120), values: map[string]float64{"epoch": 2, "loss": 0.41}},
		{line: ` {"loss": 1e-3} `, values: map[string]float64{"loss": 0.001}},
		{line: `{}`, values: map[string]float64{}},
		{line: `{"step": 1.5}`, err: "step: expected an integer, got 1.5"},
		{line: `{"loss": "low"}`, err: `"loss": expected a number, got string`},
		{line: `{"loss": [0.9, 0.6]}`, err: `"loss": expected a number`},
		{line: `[1, 2]`, err: "not a JSON object"},
		{line: `loss=0.4`, err: "not a JSON object"},
		{line: `{"loss": 0.4`, err: "unexpected end of JSON input"},
		{line: `{"": 1}`, err: "a key of 0 bytes"},
		{line: `{"step": 1e300}`, err: "step: expected an integer"},
	} {
		step, values, err := ParseLine([]byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.step, step); diff != "" {
			t.Errorf("%s: step (-want +got):\n%s", tc.line, diff)
		}
		if diff := cmp.Diff(tc.values, values); diff != "" {
			t.Errorf("%s: values (-want +got):\n%s", tc.line, diff)
		}
	}
	many := "{" + strings.Repeat(`"k`, 1)
	for n := range MaxMetrics + 1 {
		many += fmt.Sprintf(`%d": %d, "k`, n, n)
	}
	many += `x": 1}`
	if _, _, err := ParseLine([]byte(many)); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Errorf("too many keys: %v", err)
	}
}

// TestSeriesBounded: a million points leave at most max of them, evenly
// spread from the first to the last.
func TestSeriesBounded(t *testing.T) {
	s := NewSeries(100)
	const n = 1_000_000
	for k := int64(0); k < n; k++ {
		step := k
		s.Add(record.MetricPoint{Step: &step, Values: map[string]float64{"loss": float64(k)}})
	}
	p := s.Progress(true)
	if len(p.Points) > 101 || len(p.Points) < 50 {
		t.Fatalf("%d points, want 50 to 101", len(p.Points))
	}
	if *p.Points[0].Step != 0 || *p.Points[len(p.Points)-1].Step != n-1 || *p.Step != n-1 || p.Last["loss"] != n-1 || p.Lines != n {
		t.Errorf("first %d last %d step %d last loss %v lines %d", *p.Points[0].Step, *p.Points[len(p.Points)-1].Step, *p.Step, p.Last["loss"], p.Lines)
	}
	// Evenly spread: every gap but the last is the same.
	gap := *p.Points[1].Step - *p.Points[0].Step
	for j := 1; j < len(p.Points)-1; j++ {
		if d := *p.Points[j].Step - *p.Points[j-1].Step; d != gap {
			t.Fatalf("gap %d at point %d, want %d", d, j, gap)
		}
	}
}

// TestFilesMillionLines: a rank appending 10^6 metric lines (some
// malformed, one far too long, one cut across reads) is read whole, with
// the series bounded and the memory held by the tracker small.
func TestFilesMillionLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rank-0.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1_000_000
	var b strings.Builder
	for k := range n {
		switch {
		case k%1000 == 7:
			b.WriteString("not json\n")
		case k == 500_000:
			b.WriteString(`{"note": "` + strings.Repeat("x", 2*MaxLine) + "\"}\n")
		default:
			fmt.Fprintf(&b, "{\"step\": %d, \"epoch\": %d, \"loss\": %g}\n", k, k/1000, 1/float64(k+1))
		}
		if b.Len() > 1<<20 {
			f.WriteString(b.String())
			b.Reset()
		}
	}
	// The last line is written in two parts, with a poll between.
	b.WriteString(`{"step": 1000000, "lo`)
	f.WriteString(b.String())
	tr := NewTracker(0, nil)
	tr.Begin(1, []int{0})
	files := NewFiles(map[int]string{0: path})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := files.Poll(tr); err != nil {
		t.Fatal(err)
	}
	f.WriteString("ss\": 0.5}\n")
	f.Close()
	if err := files.Poll(tr); err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	p, changed := tr.Progress(true)
	malformed := int64(n/1000 + 1)
	if !changed || p.Lines != n+1 || p.Malformed != malformed || len(p.Points) > MaxPoints+1 || *p.Step != n || p.Last["loss"] != 0.5 {
		t.Errorf("changed %v lines %d malformed %d (want %d) points %d step %d last loss %v", changed, p.Lines, p.Malformed, malformed, len(p.Points), *p.Step, p.Last["loss"])
	}
	// The file is about 45 MB; what stays is the series.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("heap grew by %d bytes reading %d lines", grown, n)
	}
	if _, changed := tr.Progress(false); changed {
		t.Error("Progress says changed with nothing new")
	}
}

func TestTrackerRanks(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := NewTracker(0, func() time.Time { return now })
	tr.Begin(1, []int{0, 1, 2})
	w := tr.Writer(1, &strings.Builder{})
	fmt.Fprint(w, "epoch 1\nepoch ")
	fmt.Fprint(w, "2\n\n")
	now = now.Add(3 * time.Second)
	w0 := tr.Writer(0, &strings.Builder{})
	fmt.Fprint(w0, "10%|#   \r50%|#####")
	tr.Metric(0, []byte(`{"step": 7, "loss": 1}`))
	now = now.Add(2 * time.Second)
	t0, t1 := now.Add(-2*time.Second), now.Add(-5*time.Second)
	step := int64(7)
	want := []record.RankState{
		{Rank: 0, LastProgress: &t0, Idle: "2s", LastLine: "50%|#####", Step: &step},
		{Rank: 1, LastProgress: &t1, Idle: "5s", LastLine: "epoch 2"},
		{Rank: 2, Idle: "5s"},
	}
	if diff := cmp.Diff(want, tr.Ranks()); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	if idle := tr.Idle(); idle != 2*time.Second {
		t.Errorf("idle %s, want 2s", idle)
	}
	long := strings.Repeat("y", 3*record.MaxLastLine) + "\n"
	fmt.Fprint(w, long)
	if got := tr.Ranks()[1].LastLine; got != long[:record.MaxLastLine] {
		t.Errorf("a long line kept as %d bytes, want %d", len(got), record.MaxLastLine)
	}
	// A new attempt: progress starts afresh, the series goes on.
	tr.Begin(2, []int{0, 1, 2})
	if idle := tr.Idle(); idle != 0 {
		t.Errorf("idle %s after Begin, want 0", idle)
	}
	if p, _ := tr.Progress(true); len(p.Points) != 1 || p.Points[0].Attempt != 1 {
		t.Errorf("series after a new attempt: %+v", p.Points)
	}
}

func TestThin(t *testing.T) {
	var pts []record.MetricPoint
	for i := 0; i < 1000; i++ {
		pts = append(pts, record.MetricPoint{Attempt: i})
	}
	got := Thin(pts, 200)
	if len(got) != 200 || got[0].Attempt != 0 || got[199].Attempt != 999 {
		t.Fatalf("Thin(1000 points, 200) = %d points, first %d last %d", len(got), got[0].Attempt, got[len(got)-1].Attempt)
	}
	if got := Thin(pts[:5], 200); len(got) != 5 {
		t.Errorf("Thin(5 points, 200) = %d points, want 5", len(got))
	}
}
