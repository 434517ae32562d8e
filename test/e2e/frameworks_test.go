package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A real two-worker XGBoost training on the test bed's JobSet: one rank pod
// per worker with Kubeflow Trainer's DMLC_* variables, rank 0's pod runs the
// tracker at DMLC_TRACKER_URI (its pod DNS name), both train together
// (the same model), rank 0's model scores on held-out rows.
func TestArgoRunXGBoost(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := frameworksPipeline(t, ctx, "xgboost.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: xgb}
steps:
  - name: xgboost
    component: components/xgboost/component.yaml
    image: `+exampleImage+`
    inputs: {threads: 1}
    distributed: {nodes: 2, framework: xgboost}
`)
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

// mpirun over 2 node pods × 2 slots on the test bed's JobSet: node 0's pod
// runs mpirun, which starts OpenMPI's daemons on both node pods through
// pipectl's agent (no sshd: `pipectl mpi-rsh`, mutual TLS with the run's key
// pair from the step's Secret); the 4 processes allreduce. Each process
// names the pod it runs in (its host name: the pod's), so the test sees
// ranks 0-1 in node 0's pod and 2-3 in node 1's. The Secret is gone after
// the run. Each node pod has an address of its own, so OpenMPI takes neither
// for the launcher's host and starts the daemons of both through the agents
// (two names on one address were one host with two slot counts); its
// processes run as root, which OpenMPI refuses unless told.
func TestArgoRunMPI(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := frameworksPipeline(t, ctx, "mpi.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: mpi}
steps:
  - name: mpi
    component: components/mpi/component.yaml
    image: `+exampleImage+`
    env:
      - {name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}
      - {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}
    distributed: {nodes: 2, procsPerNode: 2, framework: mpi}
    timeout: 5m
`)
	began := time.Now()
	run := a.runArgoOK(t, ctx, file, nil, []string{"mpi Succeeded"})
	t.Logf("mpi step over 2 node pods × 2 slots: %s", time.Since(began).Round(100*time.Millisecond))
	logs, _, _ := a.pipectl(ctx, "logs", run, "mpi")
	ranks := regexp.MustCompile(`mpi rank (\d) of 4 on (\S+): allreduce 10\b`).FindAllStringSubmatch(logs, -1)
	hosts := map[string]string{}
	for _, m := range ranks {
		hosts[m[1]] = m[2]
	}
	if len(hosts) != 4 || hosts["0"] != hosts["1"] || hosts["2"] != hosts["3"] || hosts["0"] == hosts["2"] ||
		!strings.Contains(hosts["0"], "-rank-0-0") || !strings.Contains(hosts["2"], "-rank-0-1") {
		t.Errorf("the processes' hosts %v: want ranks 0-1 in node 0's pod (…-0-0), 2-3 in node 1's (…-0-1), each with allreduce 10:\n%s", hosts, logs)
	}
	result, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/mpi/result")
	if code != 0 || strings.TrimSpace(result) != "4 10" {
		t.Errorf("result %q (exit %d): want \"4 10\" (4 processes, 1+2+3+4)", result, code)
	}
	secrets, err := a.c.Client.CoreV1().Secrets(a.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if strings.HasSuffix(s.Name, "-mpi") {
			t.Errorf("Secret %s left after the run", s.Name)
		}
	}
	pods, err := a.c.Client.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d rank pod(s) left after the run", len(pods.Items))
	}
}

// frameworksPipeline writes pipeline body as name into a copy of the
// frameworks example (whose components it may name) and returns its path.
// The example's image runs the host's Debian python3 (ensure-torch.sh's),
// to which ensure-frameworks.sh adds python3-xgboost, Open MPI and mpi4py.
func frameworksPipeline(t *testing.T, ctx context.Context, name, body string) string {
	t.Helper()
	if err := exec.CommandContext(ctx, filepath.Join(images.repoRoot, "examples", "frameworks", "ensure-frameworks.sh")).Run(); err != nil {
		t.Fatalf("ensure-frameworks.sh: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(images.repoRoot, "examples", "frameworks")+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v\n%s", err, out)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
