package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// TestStalledRankResumesFromCheckpoint trains with real PyTorch: rank 1
// goes silent (SIGSTOP) at epoch 3, after rank 0 checkpointed epoch 2,
// and rank 0 blocks in the epoch's all-reduce. The gang is found stalled
// stallTimeout later, every rank stopped (the stopped one too), the
// attempt recorded as stalled naming each rank's last line; the restarted
// gang resumes at epoch 3, not 0, and the run succeeds. The record's
// metrics series holds each rank's epochs of both attempts.
func TestStalledRankResumesFromCheckpoint(t *testing.T) {
	torchPython(t)
	const stallTimeout = 15 * time.Second // torch's import is silent: seconds on a busy machine
	f := newFixture(t)
	script := filepath.Join(f.dir, "train.py")
	if err := os.WriteFile(script, []byte(resumeTrain), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.load(resumePipeline(script, filepath.Join(f.dir, "stopped"), "maxRestarts: 1, stallTimeout: "+stallTimeout.String()+", ", "0", "stop"))
	began := time.Now()
	run, err := f.run(context.Background(), p, nil, nil)
	took := time.Since(began)
	logs := f.logs.String()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, f.status, logs)
	}
	t.Logf("the run took %s (stallTimeout %s)", took.Round(100*time.Millisecond), stallTimeout)
	if got, want := rank0Epochs(logs), []int{0, 1, 2, 3, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("rank 0 logged epochs %v, want %v (attempt 2 resumes at 3)\n%s", got, want, logs)
	}
	for _, want := range []string{
		"[train rank 1] rank 1 goes silent at epoch 3", "gang attempt 1 stalled: no rank made progress for " + stallTimeout.String(),
		"[train rank 0] rank 0 starts at epoch 3", "[train rank 1] rank 1 starts at epoch 3",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the step's log lacks %q:\n%s", want, logs)
		}
	}
	s := run.Steps[0]
	if s.Status != record.StatusSucceeded || s.Attempts != 2 || len(s.GangAttempts) != 1 {
		t.Fatalf("step %s, %d attempts, gang attempts %+v; want Succeeded, 2, one stalled", s.Status, s.Attempts, s.GangAttempts)
	}
	a := s.GangAttempts[0]
	if a.Reason != record.ReasonStalled || !a.Restarted || len(a.Ranks) != 2 ||
		a.Ranks[0].LastLine != "rank 0 epoch 3" || a.Ranks[1].LastLine != "rank 1 goes silent at epoch 3" {
		t.Errorf("gang attempt %+v, want stalled, restarted, rank 0's last line \"rank 0 epoch 3\", rank 1's \"rank 1 goes silent at epoch 3\"", a)
	}
	// The metrics: epochs 0 to 2 of each rank in attempt 1, 3 and 4 in attempt 2.
	type point struct{ rank, attempt, epoch int }
	var got []point
	if s.Progress != nil {
		for _, pt := range s.Progress.Points {
			if pt.Step != nil && pt.Values["loss"] > 0 {
				got = append(got, point{pt.Rank, pt.Attempt, int(*pt.Step)})
			}
		}
	}
	slices.SortFunc(got, func(a, b point) int {
		if a.attempt != b.attempt {
			return a.attempt - b.attempt
		}
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return a.epoch - b.epoch
	})
	var want []point
	for _, span := range [][3]int{{1, 0, 2}, {2, 3, 4}} {
		for rank := range 2 {
			for e := span[1]; e <= span[2]; e++ {
				want = append(want, point{rank, span[0], e})
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("metrics points (rank, attempt, epoch) %v, want %v", got, want)
	}
}
