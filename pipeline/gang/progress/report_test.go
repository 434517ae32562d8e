package progress

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
)

func TestReportLine(t *testing.T) {
	step := int64(120)
	r := Report{Rank: 3, Lines: 121, Malformed: 1, Step: &step, Last: map[string]float64{"loss": 0.41}}
	line := r.Line()
	if !strings.HasPrefix(string(line), wire.ProgressMarker) || !strings.HasSuffix(string(line), "}\n") || strings.Count(string(line), "\n") != 1 {
		t.Fatalf("report line %q", line)
	}
	got, ok, err := ParseReport(line[:len(line)-1])
	if !ok || err != nil {
		t.Fatalf("ParseReport: ok %v, %v", ok, err)
	}
	if diff := gocmp.Diff(r, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ line, err string }{
		{line: "epoch 3"},
		{line: wire.ProgressMarker + "{", err: "a progress report: unexpected end"},
		{line: wire.ProgressMarker + `{"rank": -1}`, err: "negative rank"},
		{line: wire.ProgressMarker + `{"rank": 0, "step": "x"}`, err: "a progress report"},
		{line: wire.ProgressMarker + strings.Repeat(" ", MaxReportLine) + "{}", err: "at most"},
	} {
		_, ok, err := ParseReport([]byte(tc.line))
		if ok != (tc.err != "") || (tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err))) {
			t.Errorf("ParseReport(%.40q): ok %v, %v, want error %q", tc.line, ok, err, tc.err)
		}
	}
}

// TestEchoBounded: a rank appending 200,000 metric lines (one in a
// thousand malformed) as fast as it can gets at most one report per
// EchoInterval (and a last one when the echo stops) holding its latest
// step and how many lines it wrote; the malformed lines are counted, not
// fatal; the echo's memory does not grow with the file (reading 10^6
// lines: TestFilesMillionLines).
func TestEchoBounded(t *testing.T) {
	dir := t.TempDir()
	paths := map[int]string{4: filepath.Join(dir, "rank-4.jsonl"), 5: filepath.Join(dir, "rank-5.jsonl")}
	var mu sync.Mutex
	var reports []Report
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	stop := Echo(paths, func(line []byte) {
		r, ok, err := ParseReport(line[:len(line)-1])
		if !ok || err != nil {
			t.Errorf("echoed %q: %v", line, err)
		}
		mu.Lock()
		reports = append(reports, r)
		mu.Unlock()
	})
	f, err := os.Create(paths[4])
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	var b strings.Builder
	for k := range n {
		if k%1000 == 999 {
			b.WriteString("{\"loss\": oops}\n")
		} else {
			fmt.Fprintf(&b, "{\"step\": %d, \"loss\": %g}\n", k, 1/float64(k+1))
		}
		if b.Len() > 256<<10 {
			f.WriteString(b.String())
			b.Reset()
			if k < n/2 {
				time.Sleep(50 * time.Millisecond) // a rank writing over a while
			}
		}
	}
	f.WriteString(b.String())
	f.Close()
	bad := stop()
	took := time.Since(began)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if max := int(took/EchoInterval) + 2; len(reports) > max || len(reports) < 1 {
		t.Errorf("%d reports in %s, want 1 to %d", len(reports), took, max)
	}
	last := reports[len(reports)-1]
	for _, r := range reports {
		if r.Rank != 4 {
			t.Errorf("a report of rank %d, which wrote nothing", r.Rank)
		}
	}
	if last.Lines != n || last.Malformed != n/1000 || last.Step == nil || *last.Step != n-2 {
		t.Errorf("last report %+v, want %d lines, %d malformed, step %d", last, n, n/1000, n-2)
	}
	if len(bad) != 1 || bad[0].Rank != 4 || bad[0].Malformed != n/1000 {
		t.Errorf("malformed reports %+v, want rank 4's %d", bad, n/1000)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("heap grew by %d bytes echoing %d lines", grown, n)
	}
	t.Logf("%d lines (about 6 MB) echoed as %d reports in %s", n, len(reports), took.Round(time.Millisecond))
}

// TestEchoSeriesAsLocal: the series a launcher builds from the reports
// echoed by a rank pod's runtime holds the points a local gang reads from
// the same metrics files (every line while a rank reports at most
// MaxReportPoints lines an EchoInterval), with the same counts; a rank
// appending far more between two reports has its points thinned, its
// counts exact and its latest point kept.
func TestEchoSeriesAsLocal(t *testing.T) {
	dir := t.TempDir()
	paths := map[int]string{0: filepath.Join(dir, "rank-0.jsonl"), 1: filepath.Join(dir, "rank-1.jsonl")}
	launcher := NewTracker(0, nil)
	launcher.Begin(1, []int{0, 1})
	stop := Echo(paths, func(line []byte) {
		r, ok, err := ParseReport(line[:len(line)-1])
		if !ok || err != nil {
			t.Errorf("echoed %q: %v", line, err)
			return
		}
		launcher.Report(r.Rank, r)
	})
	files := map[int]*os.File{}
	for r, p := range paths {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[r] = f
	}
	const steps = 50
	for k := range steps {
		for r, f := range files {
			fmt.Fprintf(f, "{\"step\": %d, \"loss\": %g}\n", k, float64(r+1)/float64(k+1))
			if k == 20 && r == 1 {
				fmt.Fprintln(f, "not a metric")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	local := NewTracker(0, nil)
	local.Begin(1, []int{0, 1})
	if err := NewFiles(paths).Poll(local); err != nil {
		t.Fatal(err)
	}
	want, _ := local.Progress(true)
	got, _ := launcher.Progress(true)
	norm := func(p record.Progress) record.Progress {
		for i := range p.Points {
			p.Points[i].Time = time.Time{}
		}
		slices.SortFunc(p.Points, func(a, b record.MetricPoint) int { return cmp.Or(a.Rank-b.Rank, int(*a.Step-*b.Step)) })
		p.Updated, p.Step, p.Last = time.Time{}, nil, nil
		return p
	}
	if diff := gocmp.Diff(norm(want), norm(got)); diff != "" {
		t.Errorf("the launcher's series (-local +launcher):\n%s", diff)
	}
	if len(got.Points) != 2*steps || got.Lines != 2*steps+1 || got.Malformed != 1 {
		t.Errorf("launcher's series: %d points, %d lines, %d malformed; want %d, %d, 1", len(got.Points), got.Lines, got.Malformed, 2*steps, 2*steps+1)
	}

	// 10,000 lines at once: one report of at most MaxReportPoints points.
	path := filepath.Join(dir, "rank-2.jsonl")
	var b strings.Builder
	const many = 10_000
	for k := range many {
		fmt.Fprintf(&b, "{\"step\": %d, \"loss\": %g, \"accuracy\": %g}\n", k, 1/float64(k+1), float64(k)/many)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	thinned := NewTracker(0, nil)
	thinned.Begin(1, []int{2})
	var reports int
	Echo(map[int]string{2: path}, func(line []byte) {
		reports++
		if len(line) > MaxReportLine {
			t.Errorf("a report of %d bytes", len(line))
		}
		r, _, err := ParseReport(line[:len(line)-1])
		if err != nil || len(r.Points) > MaxReportPoints {
			t.Errorf("report of %d points: %v", len(r.Points), err)
		}
		thinned.Report(2, r)
	})()
	p, _ := thinned.Progress(true)
	if reports != 1 || p.Lines != many || len(p.Points) < 2 || len(p.Points) > MaxReportPoints || *p.Points[len(p.Points)-1].Step != many-1 || *p.Step != many-1 {
		t.Errorf("%d report(s), series of %d lines, %d points, last step %d; want 1, %d lines, 2 to %d points, last step %d", reports, p.Lines, len(p.Points), *p.Step, many, MaxReportPoints, many-1)
	}
}
