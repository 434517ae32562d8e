package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// recordStore counts the bytes written to run records and journal entries.
type recordStore struct {
	*artifacts.Local
	mu      sync.Mutex
	written int64
}

func (s *recordStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.HasSuffix(key, "/run.json") || strings.Contains(key, "/journal/") {
		s.mu.Lock()
		s.written += size
		s.mu.Unlock()
	}
	return s.Local.Put(ctx, key, r, size)
}

// independent returns a pipeline of n independent steps running true.
func independent(n int) string {
	var b strings.Builder
	b.WriteString(header + "steps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: s%d\n    cache: false\n%s\n", i, shComponent("t", "", "", "true"))
	}
	return b.String()
}

// TestRecordWritesLinear: keeping the record of a run costs writes
// proportional to its steps, not to its steps squared (every state change
// used to rewrite the whole run record).
func TestRecordWritesLinear(t *testing.T) {
	written := map[int]int64{}
	for _, n := range []int{20, 200} {
		f := newFixture(t)
		s := &recordStore{Local: f.store}
		p := f.load(independent(n))
		run, err := f.run(context.Background(), p, nil, func(r *Runner) { r.Store = s })
		if err != nil || run.Status != record.StatusSucceeded {
			t.Fatalf("%d steps: %v", n, err)
		}
		written[n] = s.written
		// The journal is folded into the final record and removed.
		if left, _ := os.ReadDir(filepath.Join(f.store.Dir(), run.ID, "journal")); len(left) != 0 {
			t.Errorf("%d steps: %d journal entries left after the run", n, len(left))
		}
		rec, err := recordstore.ReadRun(context.Background(), f.store, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range rec.Steps {
			if st.Status != record.StatusSucceeded || st.ExitCode == nil || st.Finished == nil {
				t.Fatalf("%d steps: record of %s %+v", n, st.Name, st)
			}
		}
	}
	// 10 times the steps: at most 20 times the bytes (it was 100 times).
	if written[200] > 20*written[20] {
		t.Errorf("record writes: %d bytes for 20 steps, %d for 200 (%.0f×), want linear", written[20], written[200], float64(written[200])/float64(written[20]))
	}
}

// TestReadRunDuringRun: while a run runs, a reader sees each step's state
// from the journal: the finished step with its outputs, the running one.
func TestReadRunDuringRun(t *testing.T) {
	f := newFixture(t)
	gate := filepath.Join(f.dir, "gate")
	p := f.load(header + `steps:
  - name: first
` + shComponent("first", "", "{name: n, type: int}", `echo 7 > "$1"`, "{{outputs.n.path}}") + `
  - name: second
    after: [first]
` + shComponent("second", "", "", fmt.Sprintf(`touch %[1]s.started; i=0; while [ ! -e %[1]s ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; sleep 0.05; done`, gate)) + `
`)
	ctx := context.Background()
	type result struct {
		run *record.Run
		err error
	}
	done := make(chan result, 1)
	go func() {
		run, err := f.run(ctx, p, nil, func(r *Runner) { r.RunID = "during" })
		done <- result{run, err}
	}()
	var rec *record.Run
	for i := 0; ; i++ {
		if _, err := os.Stat(gate + ".started"); err == nil {
			var err error
			if rec, err = recordstore.ReadRun(ctx, f.store, "during"); err != nil {
				t.Fatal(err)
			}
			if rec.Step("second").Status == record.StatusRunning {
				break
			}
		}
		if i > 400 {
			t.Fatalf("step second did not start:\n%s", f.status)
		}
		time.Sleep(25 * time.Millisecond)
	}
	first := rec.Step("first")
	if rec.Status != record.StatusRunning || first.Status != record.StatusSucceeded || len(first.Outputs) != 1 || *first.Outputs[0].Value != "7" {
		t.Errorf("record during the run: %s, first %+v", rec.Status, first)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.err != nil || res.run.Status != record.StatusSucceeded {
		t.Fatalf("Run: %v", res.err)
	}
}

// TestCancelLargeRun: a run of many steps cancelled midway ends with every
// step recorded in a final state and the run Cancelled.
func TestCancelLargeRun(t *testing.T) {
	f := newFixture(t)
	p := f.load(independent(1000))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	status := &cancelAfter{n: 50, cancel: cancel}
	run, err := f.run(ctx, p, nil, func(r *Runner) { r.Status = status })
	if err == nil || run.Status != record.StatusCancelled {
		t.Fatalf("Run: %v, status %s; want a cancelled run", err, run.Status)
	}
	rec, err := recordstore.ReadRun(context.Background(), f.store, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, st := range rec.Steps {
		counts[st.Status]++
	}
	if rec.Status != record.StatusCancelled || counts[record.StatusSucceeded]+counts[record.StatusCancelled] != 1000 || counts[record.StatusCancelled] < 500 {
		t.Errorf("record: %s, steps by status %v; want Cancelled, every step Succeeded or Cancelled, most Cancelled", rec.Status, counts)
	}
}

// cancelAfter cancels the run once n steps have reported success.
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(string(p), "succeeded") {
		if c.n--; c.n == 0 {
			c.cancel()
		}
	}
	return len(p), nil
}

// TestHeartbeat: while a run runs its heartbeat is rewritten every
// HeartbeatInterval, so that a reader on another host can tell a live
// runner from a dead one; the run's end removes it.
func TestHeartbeat(t *testing.T) {
	f := newFixture(t)
	gate := filepath.Join(f.dir, "gate")
	p := f.load(header + `steps:
  - name: wait
` + shComponent("wait", "", "", fmt.Sprintf(`i=0; while [ ! -e %s ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; sleep 0.05; done`, gate)) + `
`)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := f.run(ctx, p, nil, func(r *Runner) { r.RunID = "beating"; r.HeartbeatInterval = 20 * time.Millisecond })
		done <- err
	}()
	var seen []time.Time
	for i := 0; len(seen) < 3; i++ {
		if info, err := f.store.Stat(ctx, record.HeartbeatKey("beating")); err == nil && (len(seen) == 0 || info.Modified.After(seen[len(seen)-1])) {
			seen = append(seen, info.Modified)
		}
		if i > 400 {
			t.Fatalf("heartbeats seen: %v; want 3, each newer", seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := f.store.Stat(ctx, record.HeartbeatKey("beating")); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("heartbeat after the run: %v; want it removed", err)
	}
}
