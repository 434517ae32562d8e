package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
)

// checkpointPipeline is a one-step 2-rank pipeline training epochs 1 to 5 from its
// checkpoint: each rank reads the last epoch from PIPECTL_CHECKPOINT_DIR (0 when
// empty) and says so; rank 0 writes each epoch there (to a .tmp name, then renamed).
// In the gang's first attempt (no marker in dir yet) rank 1 dies 3 s after epoch 3,
// rank 0 blocks after it as a collective would; the answer is the epoch rank 0
// resumed after.
func checkpointPipeline(tb testing.TB, dir string, maxRestarts int) string {
	tb.Helper()
	script := `d="$PIPECTL_CHECKPOINT_DIR"; start=$(cat "$d/epoch" 2>/dev/null || echo 0)
echo "rank $RANK resumes after epoch $start"
e=$start
while [ $e -lt 5 ]; do
  e=$((e+1)); echo "epoch $e"
  if [ "$RANK" = 0 ]; then echo $e > "$d/epoch.tmp"; mv "$d/epoch.tmp" "$d/epoch"; fi
  sleep 0.3
  if [ $e = 3 ] && [ ! -e "$1/first-$RANK" ]; then
    touch "$1/first-$RANK"
    if [ "$RANK" = 1 ]; then sleep 3; echo "rank 1 dies after epoch 3"; exit 7; fi
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
`
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
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	wf := l.compile(ctx, checkpointPipeline(t, t.TempDir(), 1))
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
		"[rank 0] rank 0 resumes after epoch 0\n", "[rank 1] rank 1 resumes after epoch 0\n", "[rank 1] rank 1 dies after epoch 3\n",
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
	l.noJobSetLeft(ctx, 30*time.Second)
}

// A run on Argo whose distributed step fails after rank 0 checkpointed epoch 3 (no
// restart left), then `pipectl run --rerun RUN --on argo`: the rerun's rank pods
// restore the failed run's last checkpoint (the launcher passes --resume-from to
// them) and resume after epoch 3; the rerun succeeds; `artifacts ls` lists the
// rerun's checkpoint, apart from its outputs.
func TestArgoRerunResumesCheckpoint(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := checkpointPipeline(t, t.TempDir(), 0)
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
}
