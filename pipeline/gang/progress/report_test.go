package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	if diff := cmp.Diff(r, got); diff != "" {
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
