package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts/miniotest"
)

// exampleCLI builds pipectl and returns a function running it in a fresh
// directory with a python3 that has PyTorch first on PATH, and the path of
// the example pipeline.
func exampleCLI(t *testing.T, env ...string) (pipectl func(extraEnv []string, args ...string) (string, string, error), pipelineFile, work string) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pydir, err := exec.Command(filepath.Join(repo, "examples/attrition/ensure-torch.sh")).Output()
	if err != nil {
		t.Fatalf("ensure-torch.sh: %v", err)
	}
	work = t.TempDir()
	bin := buildPipectl(t)
	env = append(append(os.Environ(), "PATH="+strings.TrimSpace(string(pydir))+":"+os.Getenv("PATH")), env...)
	pipectl = func(extraEnv []string, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(append([]string{}, env...), extraEnv...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return o.String(), e.String(), err
	}
	return pipectl, filepath.Join(repo, "examples/attrition/pipeline.yaml"), work
}

// mustRun runs pipectl and fails the test when it exits non-zero.
func mustRun(t *testing.T, pipectl func([]string, ...string) (string, string, error)) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, errOut, err := pipectl(nil, args...)
		if err != nil {
			t.Fatalf("pipectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
}

// TestExamplePipeline runs examples/attrition end to end with real PyTorch
// (DDP on 2 gloo ranks), through the built pipectl binary, as a user would.
func TestExamplePipeline(t *testing.T) {
	pipectl, pipelineFile, _ := exampleCLI(t, "PIPECTL_ARTIFACTS=")
	must := mustRun(t, pipectl)

	logs := must("run", pipelineFile)

	var run struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Steps  []struct {
			Name     string `json:"name"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exitCode"`
			Cached   bool   `json:"cached"`
			Attempts int    `json:"attempts"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(must("runs", "get", "latest", "-o", "json")), &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != "Succeeded" || len(run.Steps) != 3 {
		t.Fatalf("run %+v", run)
	}
	for _, s := range run.Steps {
		if s.Status != "Succeeded" || s.ExitCode == nil || *s.ExitCode != 0 || s.Cached {
			t.Errorf("step %+v", s)
		}
	}

	// Both ranks trained, logged with their prefix, and stayed in sync.
	sums := map[string]string{}
	for _, rank := range []string{"0", "1"} {
		re := regexp.MustCompile(`(?m)^\[train rank ` + rank + `\] \[rank ` + rank + `/2\] synchronised parameter checksum (\S+)$`)
		m := re.FindStringSubmatch(logs)
		if m == nil {
			t.Fatalf("no checksum line from rank %s in:\n%s", rank, logs)
		}
		sums[rank] = m[1]
		if !regexp.MustCompile(`(?m)^\[train rank ` + rank + `\] \[rank ` + rank + `/2\] epoch 3/3 loss`).MatchString(logs) {
			t.Errorf("rank %s printed no progress for epoch 3", rank)
		}
	}
	if sums["0"] != sums["1"] {
		t.Errorf("ranks disagree on the parameters: %v", sums)
	}
	if stored := must("logs", run.ID, "train"); !strings.Contains(stored, "[train rank 1] [rank 1/2] synchronised parameter checksum") {
		t.Errorf("the stored train log lacks rank 1's lines:\n%s", stored)
	}

	// The Model and Metrics artifacts exist; their metadata's sha256 is the bytes'.
	var entries []struct {
		Step, Output, Type, URI, SHA256 string
		Size                            int64
	}
	if err := json.Unmarshal([]byte(must("artifacts", "ls", run.ID, "-o", "json")), &entries); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, e := range entries {
		types[e.Step+"/"+e.Output] = e.Type
		u, err := url.Parse(e.URI)
		if err != nil || u.Scheme != "file" {
			t.Fatalf("uri %q", e.URI)
		}
		data, err := os.ReadFile(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		var meta struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		}
		mb, err := os.ReadFile(u.Path + ".meta.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(mb, &meta); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(sum[:]); got != meta.SHA256 || got != e.SHA256 || int64(len(data)) != meta.Size {
			t.Errorf("%s/%s: bytes sha256 %s size %d; metadata %s size %d; ls %s", e.Step, e.Output, got, len(data), meta.SHA256, meta.Size, e.SHA256)
		}
	}
	if types["train/model"] != "Model" || types["evaluate/metrics"] != "Metrics" || types["preprocess/train"] != "Dataset" {
		t.Errorf("artifacts: %v", types)
	}
	var metrics struct{ Accuracy, AUC, Loss float64 }
	if err := json.Unmarshal([]byte(must("artifacts", "cat", run.ID+"/evaluate/metrics")), &metrics); err != nil {
		t.Fatal(err)
	}
	if metrics.Accuracy < 0.75 || metrics.AUC < 0.75 || metrics.Loss <= 0 {
		t.Errorf("metrics %+v: the model did not learn", metrics)
	}
	t.Logf("metrics: %+v", metrics)

	// A second run hits the cache for every step.
	must("run", pipelineFile)
	if err := json.Unmarshal([]byte(must("runs", "get", "latest", "-o", "json")), &run); err != nil {
		t.Fatal(err)
	}
	for _, s := range run.Steps {
		if !s.Cached {
			t.Errorf("second run: step %s was not cached", s.Name)
		}
	}

	// Rank 1 fails on purpose: the gang is stopped and restarted once
	// (maxRestarts: 1), then the step and the run fail with its exit code.
	out, errOut, err := pipectl([]string{"PIPECTL_EXAMPLE_FAIL_RANK=1"}, "run", pipelineFile, "--no-cache", "-p", "rows=2000")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("run with a failing rank: %v, want exit status 1\n%s\n%s", err, out, errOut)
	}
	for _, frag := range []string{"train        Failed (exit code 3)", "rank 1: exit code 3", "last lines of train:"} {
		if !strings.Contains(errOut, frag) {
			t.Errorf("summary lacks %q:\n%s", frag, errOut)
		}
	}
	if !strings.Contains(out, "[train] pipectl: gang attempt 1 failed (rank 1: exit code 3); restarting all 2 ranks (restart 1 of 1)") {
		t.Errorf("no restart in the log:\n%s", out)
	}
	if strings.Contains(errOut+out, "goroutine ") {
		t.Errorf("a Go stack trace was printed")
	}
	if err := json.Unmarshal([]byte(must("runs", "get", "latest", "-o", "json")), &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != "Failed" || run.Steps[1].Attempts != 2 || run.Steps[2].Status != "Skipped" {
		t.Errorf("failed run record: %+v", run)
	}
}

// TestExamplePipelineOnS3 runs the example with its artifacts in a real
// MinIO and reads them back, through pipectl and straight from the bucket.
func TestExamplePipelineOnS3(t *testing.T) {
	srv := miniotest.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "ml-runs"); err != nil {
		t.Fatal(err)
	}
	pipectl, pipelineFile, work := exampleCLI(t,
		"PIPECTL_ARTIFACTS=s3://ml-runs/pipelines", "AWS_ENDPOINT_URL="+srv.Endpoint,
		"AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	must := mustRun(t, pipectl)
	logs := must("run", pipelineFile, "-p", "rows=20000")
	if !strings.Contains(logs, "[train rank 1] [rank 1/2] synchronised parameter checksum") {
		t.Errorf("rank 1 did not train:\n%s", logs)
	}
	if _, err := os.Stat(filepath.Join(work, ".pipectl")); err == nil {
		t.Error("a local store was made although the store is S3")
	}
	var entries []struct{ Step, Output, Type, URI, SHA256 string }
	if err := json.Unmarshal([]byte(must("artifacts", "ls", "latest", "-o", "json")), &entries); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		key, ok := strings.CutPrefix(e.URI, "s3://ml-runs/")
		if !ok {
			t.Errorf("%s/%s is at %s, not in the bucket", e.Step, e.Output, e.URI)
			continue
		}
		if e.Type != "Model" && e.Type != "Metrics" {
			continue
		}
		found++
		obj, err := srv.Client().GetObject(ctx, "ml-runs", key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, obj)
		obj.Close()
		if err != nil {
			t.Fatalf("read %s: %v", e.URI, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != e.SHA256 {
			t.Errorf("%s: the bucket holds sha256 %s, the metadata says %s", e.URI, got, e.SHA256)
		}
	}
	if found != 2 {
		t.Errorf("found %d Model/Metrics artifacts in the bucket, want 2: %+v", found, entries)
	}
	var metrics struct{ Accuracy, AUC float64 }
	if err := json.Unmarshal([]byte(must("artifacts", "cat", "latest/evaluate/metrics")), &metrics); err != nil {
		t.Fatal(err)
	}
	if metrics.Accuracy < 0.7 || metrics.AUC < 0.7 {
		t.Errorf("metrics %+v", metrics)
	}
	if out := must("logs", "latest", "train"); !strings.Contains(out, "[train rank 0]") {
		t.Errorf("stored train log:\n%s", out)
	}
}

// TestSweepExample runs examples/sweep with real PyTorch: three 2-rank DDP
// trials, the pick of the best by validation AUC, the final evaluation.
func TestSweepExample(t *testing.T) {
	pipectl, attrition, _ := exampleCLI(t)
	run := mustRun(t, pipectl)
	sweep := filepath.Join(filepath.Dir(filepath.Dir(attrition)), "sweep", "pipeline.yaml")
	out, errOut, err := pipectl(nil, "run", sweep, "-p", "rows=4000", "-p", "epochs=1")
	if err != nil {
		t.Fatalf("pipectl run sweep: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "trial[0..2]  3 succeeded") {
		t.Errorf("stderr lacks the trials' summary:\n%s", errOut)
	}
	if !regexp.MustCompile(`\[pick\] best: trial \d, lr 0\.(1|03|01)`).MatchString(out) {
		t.Errorf("stdout lacks the winner:\n%s", out)
	}
	var trials []struct {
		Trial int     `json:"trial"`
		LR    float64 `json:"lr"`
		AUC   float64 `json:"auc"`
	}
	if err := json.Unmarshal([]byte(run("artifacts", "cat", "latest/pick/trials")), &trials); err != nil || len(trials) != 3 {
		t.Fatalf("trials = %+v, %v", trials, err)
	}
	for i, tr := range trials {
		if tr.Trial != i || tr.LR != []float64{0.1, 0.03, 0.01}[i] || tr.AUC <= 0.5 {
			t.Errorf("trial %d = %+v: want lr %v and an AUC above 0.5 (chance)", i, tr, []float64{0.1, 0.03, 0.01}[i])
		}
	}
	var rec struct {
		Steps []struct {
			Name string          `json:"name"`
			Item json.RawMessage `json:"item"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(run("runs", "get", "latest", "-o", "json")), &rec); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rec.Steps {
		names = append(names, s.Name+string(s.Item))
	}
	if got, want := strings.Join(names, " "), "preprocess holdout trial trial[0]0.1 trial[1]0.03 trial[2]0.01 pick evaluate"; got != want {
		t.Errorf("steps = %s, want %s", got, want)
	}
}
