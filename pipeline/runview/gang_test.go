package runview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/record"
)

func TestWriteGang(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step := int64(40)
	s := &record.StepRecord{
		Name:     "train",
		Progress: &record.Progress{Step: &step, Last: map[string]float64{"loss": 0.41, "epoch": 2}, Lines: 57, Malformed: 2},
		GangAttempts: []record.GangAttempt{
			{Attempt: 1, Reason: record.ReasonStalled, Restarted: true, Message: "stalled: no rank made progress for 10m0s; rank 1: …",
				Ranks: []record.RankState{
					{Rank: 0, LastProgress: &at, Idle: "10m0s", LastLine: "epoch 2", Step: &step},
					{Rank: 1, Idle: "10m2s"},
				}},
			{Attempt: 2, Reason: record.ReasonFailed, Message: "rank 1: exit code 3"},
		},
	}
	var b strings.Builder
	WriteGang(&b, s)
	want := `train: progress: step 40, epoch=2 loss=0.41 (57 metric lines, 2 malformed)
train: gang attempt 1 stalled (restarted): no rank made progress for 10m0s
    rank 0: last progress 10m0s ago (step 40), last line "epoch 2"
    rank 1: no progress in 10m2s, printed nothing
train: gang attempt 2 failed (the step failed): rank 1: exit code 3
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteGang (-want +got):\n%s", diff)
	}
	// Many ranks: the text lists the first 16.
	s = &record.StepRecord{Name: "big", GangAttempts: []record.GangAttempt{{Attempt: 1, Reason: record.ReasonStalled, Message: "stalled: x"}}}
	for r := range 64 {
		s.GangAttempts[0].Ranks = append(s.GangAttempts[0].Ranks, record.RankState{Rank: r, Idle: fmt.Sprint(r) + "s"})
	}
	b.Reset()
	WriteGang(&b, s)
	if n := strings.Count(b.String(), "\n"); n != 18 || !strings.Contains(b.String(), "and 48 more rank(s)") {
		t.Errorf("64 ranks in %d lines:\n%s", n, b.String())
	}
	if ProgressSummary(nil) != "" || ProgressSummary(&record.Progress{}) != "" {
		t.Error("a step without metrics has a progress summary")
	}
}

func TestSparklines(t *testing.T) {
	p := &record.Progress{Lines: 12}
	for i := range 10 {
		p.Points = append(p.Points, record.MetricPoint{Rank: 1, Values: map[string]float64{"loss": 9}})
		p.Points = append(p.Points, record.MetricPoint{Rank: 0, Values: map[string]float64{"loss": float64(9 - i), "acc": float64(i % 2)}})
	}
	p.Points = append(p.Points, record.MetricPoint{Rank: 0, Values: map[string]float64{"once": 1}})
	want := []string{
		"acc ▁█▁█▁█▁█▁█ 0 → 1 (10 points)",
		"loss █▇▆▅▄▄▃▂▁▁ 9 → 0 (10 points)",
	}
	if diff := cmp.Diff(want, Sparklines(p)); diff != "" {
		t.Errorf("Sparklines (-want +got):\n%s", diff)
	}
	var vs []float64
	for i := range 1000 {
		vs = append(vs, float64(i))
	}
	if got := Sparkline(vs, 32); len([]rune(got)) != 32 || !strings.HasPrefix(got, "▁") || !strings.HasSuffix(got, "█") {
		t.Errorf("Sparkline of 1000 rising points = %q", got)
	}
}
