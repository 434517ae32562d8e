package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rankLines are the lines the ranks of testdata/trainjob/ddp.yaml print.
var rankLines = regexp.MustCompile(`rank (\d) of 2 local_rank 0 loss ([0-9.]+) weight (\[[^\]]*\])`)

// TestTrainJobLocal runs a Kubeflow Trainer TrainJob file with real
// PyTorch: two DDP ranks of the torch-distributed runtime Trainer ships
// (--runtimes), whose weights agree after training; rank 0 saves the model.
func TestTrainJobLocal(t *testing.T) {
	pipectl, _, _ := exampleCLI(t)
	run := mustRun(t, pipectl)
	src, err := os.ReadFile("testdata/trainjob/ddp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "model.pt")
	job := filepath.Join(t.TempDir(), "ddp.yaml")
	if err := os.WriteFile(job, []byte(strings.Replace(string(src), "value: model.pt", "value: "+model, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runtimes, _ := filepath.Abs("../../pipeline/trainer/testdata/kubeflow/runtimes/torch_distributed.yaml")
	if out := run("validate", "--runtimes", runtimes, job); !strings.Contains(out, "valid pipeline ddp-linear (1 step)") {
		t.Errorf("validate: %s", out)
	}
	start := time.Now()
	out, errOut, err := pipectl(nil, "run", "--runtimes", runtimes, job)
	t.Logf("pipectl run of the TrainJob took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	lines := rankLines.FindAllStringSubmatch(out+errOut, -1)
	if len(lines) != 2 {
		t.Fatalf("want one line from each of 2 ranks, got %q\n%s\n%s", lines, out, errOut)
	}
	if lines[0][3] != lines[1][3] || lines[0][1] == lines[1][1] {
		t.Errorf("DDP ranks disagree on the weights: %q", lines)
	}
	if lines[0][3] != "[1.0, 2.0, -1.0, 0.5]" {
		t.Errorf("weights %s, want the true ones [1.0, 2.0, -1.0, 0.5]", lines[0][3])
	}
	// Rank 0 saved the model: it loads.
	pydir, err := exec.Command("../../examples/attrition/ensure-torch.sh").Output()
	if err != nil {
		t.Fatal(err)
	}
	check := exec.Command(filepath.Join(strings.TrimSpace(string(pydir)), "python3"), "-c", "import sys, torch; print(sorted(torch.load(sys.argv[1])))", model)
	if got, err := check.CombinedOutput(); err != nil || strings.TrimSpace(string(got)) != "['bias', 'weight']" {
		t.Errorf("model.pt: %v %s", err, got)
	}
}

// TestTrainJobComponentLocal runs a pipeline whose step's component is a
// TrainJob file, with real PyTorch: the TrainJob's two DDP ranks train
// after the step it follows, on the runtime the pipeline lists.
func TestTrainJobComponentLocal(t *testing.T) {
	pipectl, _, _ := exampleCLI(t)
	src, err := os.ReadFile("testdata/trainjob/ddp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.pt")
	if err := os.WriteFile(filepath.Join(dir, "ddp.yaml"), []byte(strings.Replace(string(src), "value: model.pt", "value: "+model, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runtimes, _ := filepath.Abs("../../pipeline/trainer/testdata/kubeflow/runtimes/torch_distributed.yaml")
	pipe := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipe, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: with-trainjob}
runtimes: [`+runtimes+`]
steps:
  - name: prep
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: prep}
      command: [sh, -c, "test ! -e `+model+` && echo prepared"]
  - name: train
    component: ddp.yaml
    after: [prep]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := pipectl(nil, "run", pipe)
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	lines := rankLines.FindAllStringSubmatch(out+errOut, -1)
	if len(lines) != 2 || lines[0][3] != "[1.0, 2.0, -1.0, 0.5]" || lines[1][3] != lines[0][3] {
		t.Errorf("want both ranks at the true weights, got %q\n%s\n%s", lines, out, errOut)
	}
	if !strings.Contains(out+errOut, "prepared") {
		t.Errorf("step prep did not run first:\n%s\n%s", out, errOut)
	}
	if _, err := os.Stat(model); err != nil {
		t.Errorf("rank 0 saved no model: %v", err)
	}
}

// TestTrainerExampleLocal runs Kubeflow Trainer's own multi-node example
// (examples/yaml/01-multi-node.yaml: `torchrun --no-python python3 -c …`
// on its torch-distributed runtime) unchanged on this machine with real
// PyTorch: pipectl is torchrun locally, so its three nodes' workers join
// one gloo group.
func TestTrainerExampleLocal(t *testing.T) {
	pipectl, _, _ := exampleCLI(t)
	runtimes, _ := filepath.Abs("../../pipeline/trainer/testdata/kubeflow/runtimes/torch_distributed.yaml")
	job, _ := filepath.Abs("../../pipeline/trainer/testdata/kubeflow/examples/01-multi-node.yaml")
	out, errOut, err := pipectl(nil, "run", "--runtimes", runtimes, job)
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	for rank := 0; rank < 3; rank++ {
		if !regexp.MustCompile(`(?m)RANK: ` + strconv.Itoa(rank) + `$`).MatchString(out + errOut) {
			t.Errorf("no line RANK: %d", rank)
		}
	}
	if n := strings.Count(out+errOut, "WORLD_SIZE: 3"); n != 3 {
		t.Errorf("%d ranks saw WORLD_SIZE 3, want 3:\n%s\n%s", n, out, errOut)
	}
}
