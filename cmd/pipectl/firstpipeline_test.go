package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/cmd/pipectl/internal/help"
)

// TestFirstPipelineTopic: the walkthrough of `pipectl help first-pipeline`
// runs as written: its files, copied out of the topic, validate and run
// (download → 2-rank DDP with real PyTorch → a loop of 3 → finally), and
// its commands find what it says they find.
func TestFirstPipelineTopic(t *testing.T) {
	tp, ok := help.Lookup("first-pipeline")
	if !ok {
		t.Fatal("no topic first-pipeline")
	}
	dir := t.TempDir()
	files := 0
	for _, b := range tp.Blocks() {
		if b.File == "" {
			continue
		}
		path := filepath.Join(dir, b.File)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		files++
	}
	if files != 6 {
		t.Fatalf("the topic holds %d files, want 6", files)
	}
	bin := buildPipectl(t)
	pipectl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		// Debian's python3, with PyTorch: the one the topic asks for.
		cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pipectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	pipectl("validate", "first/pipeline.yaml")
	out := pipectl("run", "first/pipeline.yaml")
	for _, want := range []string{"[train rank 0] rank 0 of 2", "[train rank 1] rank 1 of 2", "evaluate[0..2] 3 succeeded", "[report] run Succeeded failed steps: []"} {
		if !strings.Contains(out, want) {
			t.Errorf("pipectl run: no %q in\n%s", want, out)
		}
	}
	var m struct {
		Accuracy  float64 `json:"accuracy"`
		Threshold float64 `json:"threshold"`
	}
	metrics := pipectl("artifacts", "cat", "latest/evaluate[1]/metrics")
	if err := json.Unmarshal([]byte(metrics), &m); err != nil || m.Threshold != 0.5 || m.Accuracy < 0.7 {
		t.Errorf("evaluate[1]'s metrics: %v: %s", err, metrics)
	}
	if logs := pipectl("logs", "latest", "train"); !strings.Contains(logs, "[train rank 1]") {
		t.Errorf("pipectl logs latest train: no rank 1 line:\n%s", logs)
	}
	var rec struct {
		Steps []struct {
			Name   string `json:"name"`
			Cached bool   `json:"cached"`
		} `json:"steps"`
	}
	pipectl("run", "first/pipeline.yaml", "-p", "epochs=1")
	if err := json.Unmarshal([]byte(pipectl("runs", "get", "latest", "-o", "json")), &rec); err != nil {
		t.Fatal(err)
	}
	cached := map[string]bool{}
	for _, s := range rec.Steps {
		cached[s.Name] = s.Cached
	}
	if !cached["download"] || cached["train"] || cached["evaluate[0]"] {
		t.Errorf("a rerun with another epochs: want download reused, train and evaluate run again; got %v", cached)
	}
}

// TestREADMEPipeline: the README's "Your first pipeline" runs as its
// commands say: 2 ranks, then its metric.
func TestREADMEPipeline(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var file string
	for _, b := range (help.Topic{Body: string(data)}).Blocks() {
		if b.Lang == "yaml" && strings.Contains(b.Text, "kind: Pipeline") {
			file = b.Text
			break
		}
	}
	if file == "" {
		t.Fatal("README.md shows no pipeline")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.yaml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildPipectl(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pipectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("validate", "tiny.yaml")
	if out := run("run", "tiny.yaml", "-p", "rows=5000"); !strings.Contains(out, "[count rank 1] rank 1 of 2") {
		t.Errorf("pipectl run tiny.yaml: no rank 1 in\n%s", out)
	}
	if out := run("artifacts", "cat", "latest/count/metrics"); strings.TrimSpace(out) != `{"rows": 5000}` {
		t.Errorf("the metrics: %s", out)
	}
}
