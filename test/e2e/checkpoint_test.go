package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/record"
)

// checkpointPipeline is a one-step 2-rank pipeline training epochs 1 to 5 from its
// checkpoint: each rank reads the last epoch from PIPECTL_CHECKPOINT_DIR (0 when
// empty) and says so; rank 0 writes each epoch there (to a .tmp name, then renamed);
// each rank reports each epoch's loss (0.9 at epoch 1 to 0.5 at epoch 5) to
// PIPECTL_METRICS. Rank 0 writes its first epoch once rank 1 has read where to
// start: a local gang's ranks share one checkpoint directory, and rank 1,
// started late on a loaded machine, read rank 0's epoch 1 and skipped it.
// In the gang's first attempt (no marker in dir yet) rank 1 fails after epoch 3 as
// failure says: "dies" (3 s later, exit 7) or "stops" (SIGSTOPs itself, alive but
// stuck, in a gang with a 10 s stallTimeout); rank 0 blocks after it as a collective
// would. The answer is the epoch rank 0 resumed after.
func checkpointPipeline(tb testing.TB, dir string, maxRestarts int, failure string) string {
	tb.Helper()
	fail, extra := `sleep 3; echo "rank 1 dies after epoch 3"; exit 7`, ""
	if failure == "stops" {
		fail, extra = `echo "rank 1 stops after epoch 3"; kill -STOP $$`, "      stallTimeout: 10s\n"
	}
	script := `d="$PIPECTL_CHECKPOINT_DIR"; start=$(cat "$d/epoch" 2>/dev/null || echo 0)
echo "rank $RANK resumes after epoch $start"
touch "$1/read-$RANK-$start"
if [ "$RANK" = 0 ]; then while [ ! -e "$1/read-1-$start" ]; do sleep 0.05; done; fi
e=$start
while [ $e -lt 5 ]; do
  e=$((e+1)); echo "epoch $e"
  echo "{\"step\": $e, \"loss\": 0.$((10-e))}" >> "$PIPECTL_METRICS"
  if [ "$RANK" = 0 ]; then echo $e > "$d/epoch.tmp"; mv "$d/epoch.tmp" "$d/epoch"; fi
  sleep 0.3
  if [ $e = 3 ] && [ ! -e "$1/first-$RANK" ]; then
    touch "$1/first-$RANK"
    if [ "$RANK" = 1 ]; then ` + fail + `; fi
    echo "epoch 4: waiting for rank 1"; exec sleep 100000
  fi
done
printf %s "$start" > "$0"`
	quoted, _ := json.Marshal(script)
	file := filepath.Join(tb.TempDir(), "pipeline.yaml")
	body := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: ckpt}
steps:
  - name: train
    component:
      metadata: {name: ckpt}
      outputs:
        - {name: resumed, type: int}
      image: e2e-shell:1
      command: [sh, -c, ` + string(quoted) + `, "{{outputs.resumed.path}}", "` + dir + `"]
    distributed:
      nodes: 2
      maxRestarts: ` + strconv.Itoa(maxRestarts) + `
      checkpoint: {keep: 2, every: 1s}
` + extra
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// A 2-rank gang on the JobSet whose rank 1 dies after rank 0 checkpointed epoch 3:
// the JobSet restarts the gang, both rank pods restore the checkpoint before their
// ranks start, and the ranks resume after epoch 3, not from epoch 0 (their logs say
// where they resumed; rank 0 trains epochs 1 to 3 once); the run succeeds with
// rank 0's output saying 3; the store keeps the latest 2 checkpoints, the last one
// epoch 5.
func TestLauncherCheckpointResumes(t *testing.T) {
	g := runCheckpointGang(t, "dies")
	if a := g.GangAttempts[0]; a.Reason != record.ReasonFailed {
		t.Errorf("gang attempt %+v, want failed", a)
	}
}

// A 2-rank gang on the JobSet whose rank 1 SIGSTOPs itself (alive but stuck) after
// rank 0 checkpointed epoch 3, with rank 0 blocked behind it: no rank prints for the
// stallTimeout (10 s), so the launcher stops the gang as stalled, the JobSet restarts
// it, and the ranks resume after epoch 3 as in TestLauncherCheckpointResumes; the gang
// record names the stalled ranks with their last lines.
func TestLauncherStalledRankResumesCheckpoint(t *testing.T) {
	g := runCheckpointGang(t, "stops")
	a := g.GangAttempts[0]
	if a.Reason != record.ReasonStalled || len(a.Ranks) != 2 {
		t.Fatalf("gang attempt %+v, want stalled, 2 ranks", a)
	}
	// Rank 0's pod printed its runtime's "pipectl: checkpoint … kept" after its
	// last line: shown in the log, but neither its progress nor its last line.
	if r0, r1 := a.Ranks[0], a.Ranks[1]; r1.LastLine != "rank 1 stops after epoch 3" || r0.LastLine != "epoch 4: waiting for rank 1" || r0.LastProgress == nil || r1.LastProgress == nil {
		t.Errorf("rank states %+v, want rank 1 stopped after epoch 3, rank 0 waiting", a.Ranks)
	}
}

// runCheckpointGang runs checkpointPipeline's step through its launcher pod on the
// test bed with one restart, rank 1 failing as failure says in the first attempt, and
// checks that the restarted gang resumed from the checkpoint; it returns the step's
// gang record, which holds one restarted attempt.
func runCheckpointGang(t *testing.T, failure string) record.StepGang {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, checkpointPipeline(t, t.TempDir(), 1, failure))
	run := "ckpt-run"
	o := l.observe(ctx)
	p, logs := l.runPod(ctx, wf.podOf(t, "train", run, nil, ""))
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded (the restarted gang finishes); log:\n%s", p.Status.Phase, logs)
	}
	o.mu.Lock()
	restarts := o.restarts
	o.mu.Unlock()
	if restarts != 1 {
		t.Errorf("JobSet status.restarts reached %d, want 1", restarts)
	}
	for _, want := range []string{
		"[rank 0] rank 0 resumes after epoch 0\n", "[rank 1] rank 1 resumes after epoch 0\n", "[rank 1] rank 1 " + failure + " after epoch 3\n",
		"restored checkpoint", "[rank 0] rank 0 resumes after epoch 3\n", "[rank 1] rank 1 resumes after epoch 3\n",
		"[rank 0] epoch 5\n",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	if n := strings.Count(logs, "[rank 0] epoch 1\n"); n != 1 {
		t.Errorf("rank 0 trained epoch 1 %d times, want once (the restart resumes):\n%s", n, logs)
	}
	restored := regexp.MustCompile(`restored checkpoint \d+ of run `+run).FindAllString(logs, -1)
	if len(restored) != 2 {
		t.Errorf("%d rank pods restored this run's checkpoint, want both of the restarted gang: %q", len(restored), restored)
	}
	if got := l.s3Cat(ctx, runsPrefix+"/"+run+"/train/outputs.json"); !strings.Contains(got, `"value": "3"`) && !strings.Contains(got, `"value":"3"`) {
		t.Errorf("outputs record %s, want resumed = 3", got)
	}
	// The store: 2 complete checkpoints (keep: 2), the latest holding epoch 5.
	prefix := runsPrefix + "/" + run + "/train/.checkpoint/"
	var manifests []string
	for obj := range l.s3.ListObjects(ctx, l.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		if strings.HasSuffix(obj.Key, ".json") {
			manifests = append(manifests, strings.TrimPrefix(obj.Key, prefix))
		}
	}
	if len(manifests) != 2 {
		t.Fatalf("store holds checkpoints %q, want 2 (keep: 2)", manifests)
	}
	last := strings.TrimSuffix(manifests[1], ".json")
	if got := l.s3Cat(ctx, prefix+last+"/epoch"); got != "5\n" {
		t.Errorf("latest checkpoint %s holds epoch %q, want 5", last, got)
	}
	t.Logf("checkpoints kept: %q", manifests)
	// The ranks' metrics, echoed by their pods and collected by the launcher, are in
	// the step's gang record (the run record's on Argo): every epoch each rank
	// reported, attempt by attempt.
	var g record.StepGang
	if err := json.Unmarshal([]byte(l.s3Cat(ctx, runsPrefix+"/"+run+"/train/gang.json")), &g); err != nil {
		t.Fatal(err)
	}
	progress, err := json.Marshal(g.Progress)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSeries(progress)
	if diff := gocmp.Diff(wantSeries([3]int{1, 0, 3}, [3]int{2, 3, 5}), got, cmpopts.EquateEmpty()); err != nil || diff != "" {
		t.Errorf("the gang record's metrics series: %v (-want +got):\n%s", err, diff)
	}
	if len(g.GangAttempts) != 1 || g.GangAttempts[0].Attempt != 1 || !g.GangAttempts[0].Restarted {
		t.Fatalf("gang record's attempts %+v, want one, attempt 1, restarted", g.GangAttempts)
	}
	l.noJobSetLeft(ctx, 30*time.Second)
	return g
}

// A run on Argo whose distributed step fails after rank 0 checkpointed epoch 3 (no
// restart left), then `pipectl run --rerun RUN --on argo`: the rerun's rank pods
// restore the failed run's last checkpoint (the launcher passes --resume-from to
// them) and resume after epoch 3; the rerun succeeds; `artifacts ls` lists the
// rerun's checkpoint, apart from its outputs.
func TestArgoRerunResumesCheckpoint(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := checkpointPipeline(t, t.TempDir(), 0, "dies")
	_, errOut, code := a.runArgo(ctx, file, "--no-cache")
	m := runID.FindStringSubmatch(errOut)
	if code == 0 || m == nil {
		t.Fatalf("first run: exit %d, want a failure (rank 1 dies, no restart)\n%s", code, errOut)
	}
	first := m[1]
	out, errOut, code := a.runArgo(ctx, "--rerun="+first, "--yes")
	m = runID.FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("rerun: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	rerun := m[1]
	for _, want := range []string{
		"restored checkpoint", "of run " + first, "[rank 0] rank 0 resumes after epoch 3\n", "[rank 1] rank 1 resumes after epoch 3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rerun's log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "resumes after epoch 0") {
		t.Errorf("a rank of the rerun started from scratch:\n%s", out)
	}
	js, _, _ := a.pipectl(ctx, "runs", "get", rerun, "-o", "json")
	var rec struct {
		Steps []struct {
			Name    string `json:"name"`
			Outputs []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"outputs"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || len(rec.Steps) != 1 || len(rec.Steps[0].Outputs) != 1 || rec.Steps[0].Outputs[0].Value != "3" {
		t.Errorf("rerun record: %v\n%s\nwant train's output resumed = 3", err, js)
	}
	ls, _, code := a.pipectl(ctx, "artifacts", "ls", rerun, "-o", "json")
	var entries []struct {
		Step       string `json:"step"`
		Output     string `json:"output"`
		Checkpoint *struct {
			Generation int   `json:"generation"`
			Size       int64 `json:"size"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal([]byte(ls), &entries); err != nil || code != 0 {
		t.Fatalf("artifacts ls %s -o json: exit %d, %v\n%s", rerun, code, err, ls)
	}
	listed := false
	for _, e := range entries {
		listed = listed || e.Step == "train" && e.Output == ".checkpoint" && e.Checkpoint != nil && e.Checkpoint.Generation >= 1 && e.Checkpoint.Size == 2
	}
	if !listed {
		t.Errorf("artifacts ls %s lists no checkpoint of train (2 bytes: epoch 5):\n%s", rerun, ls)
	}
	t.Logf("artifacts ls:\n%s", ls)
	// The ranks' metrics series in the run records: the failed run's epochs 1 to 3,
	// the rerun's 4 and 5, each rank's; the same as the same two runs record locally.
	localFirst, localRerun := a.localCheckpointRuns(ctx)
	for _, c := range []struct {
		name, argo, local string
		want              ckptSeries
	}{
		{"the failed run", first, localFirst, wantSeries([3]int{1, 0, 3})},
		{"the rerun", rerun, localRerun, wantSeries([3]int{1, 3, 5})},
	} {
		for _, b := range [][2]string{{"argo", c.argo}, {"local", c.local}} {
			got, err := a.runSeries(ctx, b[1])
			if diff := gocmp.Diff(c.want, got, cmpopts.EquateEmpty()); err != nil || diff != "" {
				t.Errorf("%s (%s, run %s): metrics series: %v (-want +got):\n%s", c.name, b[0], b[1], err, diff)
			}
		}
	}
}

// localCheckpointRuns runs checkpointPipeline locally with no restart (it fails
// after epoch 3), then reruns it (it resumes); it returns both runs' ids.
func (a *argoLab) localCheckpointRuns(ctx context.Context) (first, rerun string) {
	a.t.Helper()
	_, errOut, code := a.pipectl(ctx, "run", checkpointPipeline(a.t, a.t.TempDir(), 0, "dies"), "--no-cache")
	m := localRunID.FindStringSubmatch(errOut)
	if code == 0 || m == nil {
		a.t.Fatalf("local run: exit %d, want a failure (rank 1 dies, no restart)\n%s", code, errOut)
	}
	_, errOut, code = a.pipectl(ctx, "run", "--rerun="+m[1], "--yes")
	m2 := localRunID.FindStringSubmatch(errOut)
	if code != 0 || m2 == nil {
		a.t.Fatalf("local rerun: exit %d\n%s", code, errOut)
	}
	return m[1], m2[1]
}

// ckptPoint is a point of the metrics series of checkpointPipeline's step, without
// its time (which differs by run).
type ckptPoint struct {
	Rank, Attempt int
	Step          int64
	Loss          float64
}

// ckptSeries is a step's metrics series (the record's "progress"), normalised:
// its points sorted by attempt, rank and step.
type ckptSeries struct {
	Points    []ckptPoint
	Lines     int64
	Malformed int64
	Step      int64
	Last      map[string]float64
}

// readSeries normalises a record's "progress" of checkpointPipeline's step.
func readSeries(raw json.RawMessage) (ckptSeries, error) {
	var p struct {
		Step   *int64             `json:"step"`
		Last   map[string]float64 `json:"last"`
		Points []struct {
			Rank    int                `json:"rank"`
			Attempt int                `json:"attempt"`
			Step    *int64             `json:"step"`
			Values  map[string]float64 `json:"values"`
		} `json:"points"`
		Lines     int64 `json:"lines"`
		Malformed int64 `json:"malformed"`
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ckptSeries{}, errors.New("no progress in the record")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return ckptSeries{}, err
	}
	s := ckptSeries{Lines: p.Lines, Malformed: p.Malformed, Last: p.Last}
	if p.Step != nil {
		s.Step = *p.Step
	}
	for _, pt := range p.Points {
		if pt.Step == nil || len(pt.Values) != 1 {
			return s, fmt.Errorf("point %+v: want a step and a loss", pt)
		}
		s.Points = append(s.Points, ckptPoint{Rank: pt.Rank, Attempt: pt.Attempt, Step: *pt.Step, Loss: pt.Values["loss"]})
	}
	slices.SortFunc(s.Points, func(a, b ckptPoint) int {
		return cmp.Or(a.Attempt-b.Attempt, a.Rank-b.Rank, int(a.Step-b.Step))
	})
	return s, nil
}

// wantSeries is the series of checkpointPipeline's 2 ranks training epochs from+1 to
// to in each attempt of spans ({attempt, from, to}).
func wantSeries(spans ...[3]int) ckptSeries {
	var s ckptSeries
	for _, sp := range spans {
		for rank := range 2 {
			for e := sp[1] + 1; e <= sp[2]; e++ {
				s.Points = append(s.Points, ckptPoint{Rank: rank, Attempt: sp[0], Step: int64(e), Loss: float64(10-e) / 10})
			}
		}
		s.Step, s.Last = int64(sp[2]), map[string]float64{"loss": float64(10-sp[2]) / 10}
	}
	s.Lines = int64(len(s.Points))
	return s
}

// runSeries is the metrics series of run's step train, as `runs get -o json` shows it.
func (a *argoLab) runSeries(ctx context.Context, run string) (ckptSeries, error) {
	js, errOut, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	if code != 0 {
		return ckptSeries{}, fmt.Errorf("runs get %s: exit %d: %s", run, code, errOut)
	}
	var rec struct {
		Steps []struct {
			Name     string          `json:"name"`
			Progress json.RawMessage `json:"progress"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || len(rec.Steps) != 1 {
		return ckptSeries{}, fmt.Errorf("runs get %s: %v, want one step:\n%s", run, err, js)
	}
	return readSeries(rec.Steps[0].Progress)
}
