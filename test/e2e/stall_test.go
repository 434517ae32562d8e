package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/record"
)

// stallPipeline is a one-step 2-rank pipeline whose ranks print epochs 1 to 3; in the
// gang's first attempt (no marker file in dir yet) rank 1 then stops printing and sleeps
// for ever, and rank 0 says it waits for rank 1 and blocks too, as a collective would;
// a restarted gang finishes.
func stallPipeline(tb testing.TB, dir, distributed string) string {
	tb.Helper()
	script := `for e in 1 2 3; do echo "epoch $e"; sleep 0.3; done
if [ ! -e "$1/first-$RANK" ]; then
  touch "$1/first-$RANK"
  if [ "$RANK" = 1 ]; then exec sleep 100000; fi
  sleep 1; echo "epoch 4: waiting for rank 1"; exec sleep 100000
fi
echo "epoch 4"; printf 42 > "$0"`
	quoted, _ := json.Marshal(script)
	file := filepath.Join(tb.TempDir(), "pipeline.yaml")
	body := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: stall}
steps:
  - name: train
    component:
      metadata: {name: stall}
      outputs:
        - {name: answer, type: int}
      image: e2e-shell:1
      command: [sh, -c, ` + string(quoted) + `, "{{outputs.answer.path}}", "` + dir + `"]
    distributed:
` + distributed
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// A 2-rank gang whose rank 1 stops printing after epoch 3 (rank 0 blocks a second
// later) is stalled stallTimeout after the last line: the launcher deletes its pods,
// the JobSet restarts the gang (maxRestarts 1), the restarted gang succeeds, and the
// step's gang record says attempt 1 stalled, rank 1 idle the longest with its last line.
func TestLauncherStall(t *testing.T) {
	const stallTimeout = 10 * time.Second
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	marks := t.TempDir()
	wf := l.compile(ctx, stallPipeline(t, marks, "      nodes: 2\n      maxRestarts: 1\n      stallTimeout: 10s\n"))
	run := "stall-run"
	o := l.observe(ctx)
	pod := wf.podOf(t, "train", run, nil, "")
	began := time.Now()
	p, logs := l.runPod(ctx, pod)
	took := time.Since(began)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded (the restarted gang finishes); log:\n%s", p.Status.Phase, logs)
	}
	o.mu.Lock()
	restarts := o.restarts
	o.mu.Unlock()
	if restarts != 1 {
		t.Errorf("JobSet status.restarts reached %d, want 1 (the stall's restart)", restarts)
	}
	for _, want := range []string{
		"gang attempt 1 stalled: no rank made progress for 10s; every rank stopped",
		`rank 1: last progress `, `, last line "epoch 3"`, `last line "epoch 4: waiting for rank 1"`,
		"restarting all 2 rank pod(s) (restart 1 of 1)",
		"gang restart 1: attempt 1 stalled (no rank made progress for 10s)",
		"[rank 0] epoch 4\n", "JobSet " + ns + "/",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	var g record.StepGang
	if err := json.Unmarshal([]byte(l.s3Cat(ctx, runsPrefix+"/"+run+"/train/gang.json")), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.GangAttempts) != 1 {
		t.Fatalf("gang record %+v, want one attempt", g)
	}
	a := g.GangAttempts[0]
	if a.Attempt != 1 || a.Reason != record.ReasonStalled || !a.Restarted || len(a.Ranks) != 2 {
		t.Fatalf("gang attempt %+v, want 1, stalled, restarted, 2 ranks", a)
	}
	r0, r1 := a.Ranks[0], a.Ranks[1]
	if r1.LastLine != "epoch 3" || r0.LastLine != "epoch 4: waiting for rank 1" || r0.LastProgress == nil || r1.LastProgress == nil {
		t.Fatalf("rank states %+v, want rank 1 at epoch 3, rank 0 waiting", a.Ranks)
	}
	idle1, err1 := time.ParseDuration(r1.Idle)
	idle0, err0 := time.ParseDuration(r0.Idle)
	if err := errors.Join(err0, err1); err != nil {
		t.Fatal(err)
	}
	// Detection: the gang's last progress (rank 0's line) to the stop is stallTimeout
	// plus at most one poll (1s) and a little.
	t.Logf("stalled: rank 0 idle %s, rank 1 idle %s (stallTimeout %s); launcher pod ran %s in all", idle0, idle1, stallTimeout, took.Round(100*time.Millisecond))
	if idle0 < stallTimeout || idle0 > stallTimeout+2*time.Second {
		t.Errorf("stopped %s after the gang's last progress, want within [%s, %s]", idle0, stallTimeout, stallTimeout+2*time.Second)
	}
	if idle1 <= idle0 {
		t.Errorf("rank 1 idle %s, want longer than rank 0's %s (it stopped first)", idle1, idle0)
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}
