package gang

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
)

// trainSh is a 2-rank "training": each step, each rank reports a metric,
// prints a line and waits for the other rank to reach the step (a file
// barrier standing for an all-reduce). On the first attempt rank 1 stops
// itself (SIGSTOP) at step 3: rank 0 then blocks in the barrier, as a DDP
// peer blocks in its collective.
var trainSh = strings.ReplaceAll(`echo $$ > pid-$RANK-$$
step=0
while [ $step -lt $1 ]; do
  if [ "$RANK" = 1 ] && [ $step = 3 ] && [ ! -e stopped-once ]; then
    touch stopped-once
    echo "rank 1 stops itself at step 3"
    kill -STOP $$
  fi
  echo "{\"step\": $step, \"epoch\": $((step / 2)), \"loss\": 0.$((9 - step))}" >> "$METRICS"
  echo "rank $RANK step $step"
  touch at-$RANK-$step-$MASTER_PORT
  while [ ! -e at-$((1 - RANK))-$step-$MASTER_PORT ]; do sleep 0.05; done
  step=$((step + 1))
done`, "$METRICS", "$"+wire.EnvMetrics)

func trainGang(t *testing.T, steps int) (*Gang, *componentstest.Buffer, string) {
	dir := t.TempDir()
	out := &componentstest.Buffer{}
	return &Gang{
		Nodes: 2, ProcsPerNode: 1, Dir: dir, Env: os.Environ(), GracePeriod: 2 * time.Second,
		MetricsDir: filepath.Join(dir, "metrics"),
		Argv: func(node, local int) ([]string, error) {
			return []string{"sh", "-c", trainSh, "train", fmt.Sprint(steps)}, nil
		},
		Output: func(rank int) io.Writer { return out },
	}, out, dir
}

// TestGangStalledRankRestarts: rank 1 stops itself (SIGSTOP) and rank 0
// blocks waiting for it. With stallTimeout 2s the gang is found stalled,
// every rank stopped (the stopped one too), the attempt recorded as
// stalled naming each rank's last line, step and idle time, and the
// second attempt succeeds. The metrics of both attempts form one series.
func TestGangStalledRankRestarts(t *testing.T) {
	g, out, dir := trainGang(t, 8)
	g.StallTimeout, g.MaxRestarts = 2*time.Second, 1
	var mu sync.Mutex
	var ended []record.GangAttempt
	var last record.Progress
	var logs []string
	g.Ended = func(a record.GangAttempt) { mu.Lock(); ended = append(ended, a); mu.Unlock() }
	g.Progress = func(p record.Progress) { mu.Lock(); last = p; mu.Unlock() }
	g.Logf = func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	start := time.Now()
	attempts, err := g.Run(context.Background())
	took := time.Since(start)
	if err != nil || attempts != 2 {
		t.Fatalf("Run = %d, %v, want 2 attempts and success; log:\n%s", attempts, err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 1 {
		t.Fatalf("ended attempts %+v, want one", ended)
	}
	a := ended[0]
	if a.Attempt != 1 || a.Reason != record.ReasonStalled || !a.Restarted || len(a.Ranks) != 2 || !strings.HasPrefix(a.Message, "stalled: no rank made progress for 2s") {
		t.Fatalf("attempt record %+v", a)
	}
	r0, r1 := a.Ranks[0], a.Ranks[1]
	if r0.Rank != 0 || r0.LastLine != "rank 0 step 3" || r0.Step == nil || *r0.Step != 3 || r0.LastProgress == nil {
		t.Errorf("rank 0 state %+v, want last line %q at step 3", r0, "rank 0 step 3")
	}
	if r1.Rank != 1 || r1.LastLine != "rank 1 stops itself at step 3" || r1.Step == nil || *r1.Step != 2 {
		t.Errorf("rank 1 state %+v, want the line it printed before stopping, at step 2", r1)
	}
	idle0, _ := time.ParseDuration(r0.Idle)
	idle1, _ := time.ParseDuration(r1.Idle)
	if idle1 < 2*time.Second || idle0 < 2*time.Second {
		t.Errorf("idle rank 0 %s rank 1 %s, want both at least the 2s stall timeout", r0.Idle, r1.Idle)
	}
	if !strings.Contains(a.Message, `rank 1: last progress`) || !strings.Contains(a.Message, `last line "rank 1 stops itself at step 3"`) {
		t.Errorf("message %q does not name rank 1's state", a.Message)
	}
	joined := strings.Join(logs, "\n")
	if !strings.Contains(joined, "gang attempt 1 stalled: no rank made progress for 2s") || !strings.Contains(joined, `rank 1: last progress`) {
		t.Errorf("gang log lacks the stall:\n%s", joined)
	}
	// Every process of the first attempt is gone, the stopped one too.
	for _, pid := range readPids(t, dir) {
		if alive(pid) {
			t.Errorf("process %d is still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// The series: steps 0-2 (and rank 0's 3) of attempt 1, all 8 steps of
	// both ranks in attempt 2.
	byAttempt := map[int]int{}
	for _, p := range last.Points {
		byAttempt[p.Attempt]++
	}
	if byAttempt[2] != 16 || byAttempt[1] < 5 || last.Step == nil || *last.Step != 7 || last.Malformed != 0 {
		t.Errorf("series: %d points by attempt %v, step %v, malformed %d", len(last.Points), byAttempt, last.Step, last.Malformed)
	}
	t.Logf("stalled, restarted and succeeded in %s", took)
}

// TestGangStalledOutOfRestarts: a gang whose ranks never print fails with
// a *StallError naming both ranks; every process is stopped.
func TestGangStalledOutOfRestarts(t *testing.T) {
	dir := t.TempDir()
	g, out := shGang(`echo $$ > pid-$RANK; exec sleep 300`, 1, 2, dir)
	g.StallTimeout = time.Second
	start := time.Now()
	attempts, err := g.Run(context.Background())
	var se *StallError
	if !errors.As(err, &se) || attempts != 1 || len(se.Ranks) != 2 {
		t.Fatalf("Run = %d, %v, want one stalled attempt; log:\n%s", attempts, err, out)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("took %s to find a 1s stall", took)
	}
	msg := err.Error()
	for _, want := range []string{"stalled: no rank made progress for 1s", "rank 0: no progress in 1", "rank 1: no progress in 1", "printed nothing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, pid := range readPids(t, dir) {
		if alive(pid) {
			t.Errorf("process %d is still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestGangSteadyProgressIsNotAStall: ranks that print every 200ms for 3s
// outlive a 1s stall timeout.
func TestGangSteadyProgressIsNotAStall(t *testing.T) {
	g, out := shGang(`for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo "rank $RANK tick $i"; sleep 0.2; done`, 1, 2, t.TempDir())
	g.StallTimeout = time.Second
	if attempts, err := g.Run(context.Background()); err != nil || attempts != 1 {
		t.Fatalf("Run = %d, %v; log:\n%s", attempts, err, out)
	}
}
