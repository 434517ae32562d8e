package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/launcher/jobset"
)

// scalePipeline is a one-step pipeline of a gang of nodes rank pods (procs
// rank processes each) whose ranks print lines epochs 1 to lines. With
// stalled >= 0, in the gang's first attempt (no marker in dir yet) rank
// stalled then goes silent and every other rank says it waits for it and
// blocks, as in a collective; a restarted gang finishes.
func scalePipeline(tb testing.TB, dir string, nodes, procs, lines, stalled int, distributed string) string {
	tb.Helper()
	script := fmt.Sprintf(`e=1; while [ $e -le %d ]; do echo "epoch $e"; e=$((e+1)); sleep 0.2; done
if [ %d -ge 0 ] && [ ! -e "$1/first-$RANK" ]; then
  touch "$1/first-$RANK"
  if [ "$RANK" = %d ]; then exec sleep 100000; fi
  sleep 1; echo "waiting for rank %d"; exec sleep 100000
fi
echo "rank $RANK done"; printf 42 > "$0"`, lines, stalled, stalled, stalled)
	quoted, _ := json.Marshal(script)
	file := filepath.Join(tb.TempDir(), "pipeline.yaml")
	body := fmt.Sprintf(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: scale}
steps:
  - name: train
    component:
      metadata: {name: scale}
      outputs:
        - {name: answer, type: int}
      image: e2e-shell:1
      command: [sh, -c, %s, "{{outputs.answer.path}}", "%s"]
    distributed:
      nodes: %d
      procsPerNode: %d
%s`, quoted, dir, nodes, procs, distributed)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// restartWatch records when the namespace's JobSet first reported a gang
// restart and when every rank pod of its second attempt ran.
type restartWatch struct {
	mu        sync.Mutex
	restarted time.Time
	running   time.Time // every pod of the first attempt runs
	rerun     time.Time // every pod of the second attempt runs
}

func (l *lab) watchRestart(ctx context.Context, nodes int) *restartWatch {
	w := &restartWatch{}
	go func() {
		for ctx.Err() == nil {
			jss, err := l.js.JobsetV1alpha2().JobSets(l.ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, js := range jss.Items {
					w.mu.Lock()
					if js.Status.Restarts >= 1 && w.restarted.IsZero() {
						w.restarted = time.Now()
					}
					w.mu.Unlock()
				}
			}
			pods, err := l.c.Client.CoreV1().Pods(l.ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
			if err == nil {
				running := map[string]int{}
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning {
						running[p.Labels[jobset.LabelRestartAttempt]]++
					}
				}
				w.mu.Lock()
				if running["0"] == nodes && w.running.IsZero() {
					w.running = time.Now()
				}
				if running["1"] == nodes && w.rerun.IsZero() {
					w.rerun = time.Now()
				}
				w.mu.Unlock()
			}
			pause(ctx, 200*time.Millisecond)
		}
	}()
	return w
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

var usageLine = regexp.MustCompile(`pipectl launch: usage cpu=(\S+) maxrss=(\d+)`)

// launcherUsage is the launcher's CPU time and peak resident memory, from
// its log.
func launcherUsage(tb testing.TB, logs string) (time.Duration, int64) {
	tb.Helper()
	m := usageLine.FindStringSubmatch(logs)
	if m == nil {
		tb.Fatalf("no usage line in the launcher's log:\n%s", tail(logs, 40))
	}
	cpu, err := time.ParseDuration(m[1])
	if err != nil {
		tb.Fatal(err)
	}
	rss, _ := strconv.ParseInt(m[2], 10, 64)
	return cpu, rss
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// A gang of 64 rank pods on the test bed's process node (it holds 110 pods)
// launches and streams every rank's lines; in its first attempt rank 37 goes
// silent and the others block: the launcher sees no progress for
// stallTimeout, deletes the 64 pods, the JobSet restarts the gang within
// stallTimeout + 30 s of the gang's last line, and the restarted gang
// finishes; nothing is left.
func TestLauncherScaleStall(t *testing.T) {
	const nodes, stalled, stallTimeout = 64, 37, 10 * time.Second
	c, ns, _ := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, scalePipeline(t, t.TempDir(), nodes, 1, 2, stalled,
		"      maxRestarts: 1\n      stallTimeout: 10s\n      startupTimeout: 4m\n"))
	run := "scale-run"
	rw := l.watchRestart(ctx, nodes)
	began := time.Now()
	p, logs := l.runPod(ctx, wf.podOf(t, "train", run, nil, ""))
	took := time.Since(began)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s after %s, want Succeeded; log:\n%s", p.Status.Phase, took, tail(logs, 80))
	}
	for r := 0; r < nodes; r++ {
		for _, want := range []string{fmt.Sprintf("[rank %d] epoch 2\n", r), fmt.Sprintf("[rank %d] rank %d done\n", r, r)} {
			if !strings.Contains(logs, want) {
				t.Errorf("launcher log lacks %q", want)
			}
		}
	}
	for _, want := range []string{
		"gang attempt 1 stalled: no rank made progress for 10s; every rank stopped",
		"restarting all 64 rank pod(s) (restart 1 of 1)", "and 56 more rank(s)",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, tail(logs, 80))
		}
	}
	var g record.StepGang
	if err := json.Unmarshal([]byte(l.s3Cat(ctx, runsPrefix+"/"+run+"/train/gang.json")), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.GangAttempts) != 1 || g.GangAttempts[0].Reason != record.ReasonStalled || len(g.GangAttempts[0].Ranks) != nodes {
		t.Fatalf("gang record %+v, want one stalled attempt of %d ranks", g, nodes)
	}
	// The gang's last progress: the latest of its ranks'.
	var last time.Time
	for _, r := range g.GangAttempts[0].Ranks {
		if r.LastProgress != nil && r.LastProgress.After(last) {
			last = *r.LastProgress
		}
		want := fmt.Sprintf("waiting for rank %d", stalled)
		if r.Rank == stalled {
			want = "epoch 2"
		}
		if r.LastLine != want {
			t.Errorf("rank %d's state %+v, want last line %q", r.Rank, r, want)
		}
	}
	rw.mu.Lock()
	restarted, rerun, running := rw.restarted, rw.rerun, rw.running
	rw.mu.Unlock()
	if restarted.IsZero() || last.IsZero() || running.IsZero() {
		t.Fatalf("no restart seen (%v), no last progress (%v) or never all running (%v)", restarted, last, running)
	}
	// The stall clock runs from the later of the gang's last line and all
	// its pods running.
	if running.After(last) {
		t.Logf("the last pod of attempt 1 ran %s after the gang's last line", running.Sub(last).Round(100*time.Millisecond))
		last = running
	}
	detect := restarted.Sub(last)
	cpu, rss := launcherUsage(t, logs)
	again := "not seen all at once (they finish in a second)"
	if !rerun.IsZero() {
		again = rerun.Sub(last).Round(100*time.Millisecond).String() + " after"
	}
	t.Logf("64 ranks: restart %s after the gang's last line (stallTimeout %s); attempt 2 all running: %s; launcher pod ran %s, launcher cpu %s, maxrss %.1f MiB",
		detect.Round(100*time.Millisecond), stallTimeout, again, took.Round(time.Second), cpu, float64(rss)/(1<<20))
	if detect < stallTimeout || detect > stallTimeout+30*time.Second {
		t.Errorf("gang restarted %s after its last progress, want within [%s, %s]", detect, stallTimeout, stallTimeout+30*time.Second)
	}
	l.noJobSetLeft(ctx, 60*time.Second)
}

// BenchmarkLauncherScale runs a gang that streams 20 lines a rank at 8 and
// 64 rank pods, and 256 ranks as 64 pods of 4 processes (the test bed's node
// holds 110 pods), and reports the launcher's CPU time and peak resident
// memory (its own getrusage, logged when it exits) and the launcher pod's
// wall time. Run with
//
//	go test -count=1 -run '^$' -bench BenchmarkLauncherScale -benchtime 1x -v .
func BenchmarkLauncherScale(b *testing.B) {
	if cluster == nil {
		b.Skip("no test bed (-short)")
	}
	for _, sc := range []struct{ nodes, procs int }{{8, 1}, {64, 1}, {64, 4}} {
		b.Run(fmt.Sprintf("ranks=%d/pods=%d", sc.nodes*sc.procs, sc.nodes), func(b *testing.B) {
			cluster.DumpOnFailure(b)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			ns := cluster.Namespace(b)
			l := newLab(b, cluster, ns, ctx)
			wf := l.compile(ctx, scalePipeline(b, b.TempDir(), sc.nodes, sc.procs, 20, -1, "      startupTimeout: 5m\n"))
			var cpu, wall time.Duration
			var rss int64
			for i := 0; i < b.N; i++ {
				began := time.Now()
				p, logs := l.runPod(ctx, wf.podOf(b, "train", fmt.Sprintf("bench-%d", i), nil, ""))
				if p.Status.Phase != corev1.PodSucceeded {
					b.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, tail(logs, 60))
				}
				if n := strings.Count(logs, "] epoch 20\n"); n != sc.nodes*sc.procs {
					b.Errorf("%d ranks' last lines in the launcher's log, want %d", n, sc.nodes*sc.procs)
				}
				wall += time.Since(began)
				c, r := launcherUsage(b, logs)
				cpu += c
				rss = max(rss, r)
				l.noJobSetLeft(ctx, 2*time.Minute)
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "launcher-cpu-ms/op")
			b.ReportMetric(float64(rss)/(1<<20), "launcher-maxrss-MiB")
			b.ReportMetric(wall.Seconds()/float64(b.N), "launcher-pod-s/op")
		})
	}
}
