package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// A real two-worker XGBoost training on the test bed's JobSet: one rank pod
// per worker with Kubeflow Trainer's DMLC_* variables, rank 0's pod runs the
// tracker at DMLC_TRACKER_URI (its pod DNS name), both train together
// (the same model), rank 0's model scores on held-out rows.
func TestArgoRunXGBoost(t *testing.T) {
	a, ctx := newArgoLab(t)
	// The example's image runs the host's Debian python3 (ensure-torch.sh's),
	// to which ensure-frameworks.sh adds python3-xgboost.
	if err := exec.CommandContext(ctx, filepath.Join(images.repoRoot, "examples", "frameworks", "ensure-frameworks.sh")).Run(); err != nil {
		t.Fatalf("ensure-frameworks.sh: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(images.repoRoot, "examples", "frameworks")+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "xgboost.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: xgb}
steps:
  - name: xgboost
    component: components/xgboost/component.yaml
    image: `+exampleImage+`
    inputs: {threads: 1}
    distributed: {nodes: 2, framework: xgboost}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := a.runArgoOK(t, ctx, file, []string{"[xgboost] [rank 0] ", "[xgboost] [rank 1] "}, []string{"xgboost Succeeded"})
	logs, _, _ := a.pipectl(ctx, "logs", run, "xgboost")
	sums := regexp.MustCompile(`worker (\d) of 2: trained on 4000 rows, model sha256 ([0-9a-f]{64})`).FindAllStringSubmatch(logs, -1)
	if len(sums) != 2 || sums[0][2] != sums[1][2] || sums[0][1] == sums[1][1] {
		t.Errorf("the workers' models %q: want the same model from workers 0 and 1:\n%s", sums, logs)
	}
	metrics, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/xgboost/metrics")
	var m struct {
		Accuracy float64
		Workers  int
	}
	if err := json.Unmarshal([]byte(metrics), &m); err != nil || code != 0 || m.Workers != 2 || m.Accuracy < 0.85 {
		t.Errorf("metrics %q (exit %d, %v): want 2 workers, held-out accuracy >= 0.85", metrics, code, err)
	}
}
