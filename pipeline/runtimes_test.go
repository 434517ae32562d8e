package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

const kubeflowRuntimes = "trainer/testdata/kubeflow/runtimes"

func kubeflowSet(t *testing.T) LoadOptions {
	t.Helper()
	set, err := trainer.ReadRuntimes([]string{kubeflowRuntimes})
	if err != nil {
		t.Fatal(err)
	}
	return LoadOptions{Runtimes: set}
}

func stepPipeline(distributed string, extra ...string) string {
	return `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: t}
      command: [python3, t.py]
    distributed: ` + distributed + "\n" + strings.Join(extra, "\n")
}

// TestRuntimeStep: each of Kubeflow's shipped runtimes a step can run
// gives it its framework, processes per node and image.
func TestRuntimeStep(t *testing.T) {
	opts := kubeflowSet(t)
	for _, tc := range []struct{ runtime, framework, image string }{
		{"torch-distributed", "torch", "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"},
		{"deepspeed-distributed", "mpi", "ghcr.io/kubeflow/trainer/deepspeed-runtime"},
		{"mlx-distributed", "mpi", "ghcr.io/kubeflow/trainer/mlx-runtime"},
		{"jax-distributed", "jax", "nvcr.io/nvidia/jax:25.10-py3"},
		{"xgboost-distributed", "xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"},
	} {
		p, err := ParseWith("p.yaml", []byte(stepPipeline("{runtime: "+tc.runtime+", nodes: 2}")), opts)
		if err != nil {
			t.Errorf("%s: %v", tc.runtime, err)
			continue
		}
		s := p.Steps[0]
		if s.Distributed.Framework != tc.framework || s.Image != tc.image || s.Distributed.Nodes != 2 {
			t.Errorf("%s: framework %q image %q nodes %d", tc.runtime, s.Distributed.Framework, s.Image, s.Distributed.Nodes)
		}
	}
}

// TestRuntimeErrors: a runtime that names nothing, a framework that
// contradicts the runtime's, a runtime with fields pipectl cannot honour
// and a reserved variable in a runtime-fed step: each at its line.
func TestRuntimeErrors(t *testing.T) {
	opts := kubeflowSet(t)
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{stepPipeline("{runtime: torch-distributd, nodes: 2}"), []string{
			`p.yaml:11:28: steps[0].distributed.runtime: no runtime named "torch-distributd": the runtimes loaded are ClusterTrainingRuntime/deepspeed-distributed, `}},
		{stepPipeline("{runtime: jax-distributed, framework: xgboost}"), []string{
			`p.yaml:11:56: steps[0].distributed.framework: framework xgboost contradicts runtime "jax-distributed", whose mlPolicy is jax (trainer/testdata/kubeflow/runtimes/jax_distributed.yaml:18): leave framework out, or name a xgboost runtime`}},
		{stepPipeline("{runtime: torchtune-llama3.2-1b}"), []string{
			`p.yaml:11:28: steps[0].distributed.runtime: runtime "torchtune-llama3.2-1b" (trainer/testdata/kubeflow/runtimes/llama3_2_1B.yaml:18) holds fields pipectl cannot honour, below`,
			`trainer/testdata/kubeflow/runtimes/llama3_2_1B.yaml:27:7: spec.template.spec.volumeClaimPolicies: not supported by pipectl: a step has no volumes`,
			`trainer/testdata/kubeflow/runtimes/llama3_2_1B.yaml:37:17: spec.template.spec.replicatedJobs[0]: pipectl runs only the trainer job (node) of a runtime: Trainer's "dataset-initializer" job is not run`,
		}},
		{stepPipeline("{runtime: torch-distributed}", "    env: [{name: RANK, value: '3'}]"), []string{
			`p.yaml:12:18: steps[0].env[0].name: variable RANK is pipectl's own`}},
		{stepPipeline("{runtime: gpu}", "runtimes: [no-such-dir]"), []string{
			`p.yaml:12:1: runtimes: cannot load the runtimes listed`, `runtimes no-such-dir: no such file or directory`}},
	} {
		_, err := ParseWith("p.yaml", []byte(tc.src), opts)
		got := yamlfile.Split(err)
		if len(got) < len(tc.want) {
			t.Errorf("errors %v, want %q", got, tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i].Error(), w) {
				t.Errorf("error %d:\n got %s\nwant %s…", i, got[i], w)
			}
		}
	}
}

// TestRuntimeOverride: the step's own fields win over the runtime's; the
// runtime listed by the pipeline is found relative to it.
func TestRuntimeOverride(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rt.yaml"), []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: cpu}
spec:
  mlPolicy: {numNodes: 3, mpi: {numProcPerNode: 2}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  nodeSelector: {pool: cpu, zone: a}
                  tolerations: [{key: cpu, operator: Exists}]
                  priorityClassName: batch
                  containers:
                    - name: node
                      image: mpi:1
                      env: [{name: A, value: runtime}, {name: B, value: runtime}]
                      resources: {requests: {cpu: "8", memory: 16Gi}}
`), 0o644)
	file := filepath.Join(dir, "p.yaml")
	os.WriteFile(file, []byte(stepPipeline("{runtime: cpu, procsPerNode: 4, nodeSelector: {zone: b}, tolerations: [{key: mine, operator: Exists}]}",
		"    image: own:2", "    env: [{name: B, value: step}]", "runtimes: [rt.yaml]")), 0o644)
	p, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Steps[0]
	d := s.Distributed
	got := map[string]any{"framework": d.Framework, "nodes": d.Nodes, "procs": d.ProcsPerNode, "image": s.Image, "env": s.Env,
		"nodeSelector": d.NodeSelector, "tolerations": d.Tolerations, "priority": d.PriorityClass, "cpu": d.Resources.CPU, "memory": d.Resources.Memory}
	want := map[string]any{"framework": "mpi", "nodes": 3, "procs": 4, "image": "own:2",
		"env":          []components.EnvVar{{Name: "A", Value: "runtime"}, {Name: "B", Value: "step"}},
		"nodeSelector": map[string]string{"pool": "cpu", "zone": "b"}, "tolerations": []Toleration{{Key: "mine", Operator: "Exists"}},
		"priority": "batch", "cpu": "8", "memory": "16Gi"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
}

// TestTrainJobPatches: a TrainJob's trainer fields win over its
// runtimePatches', which win over its runtime's (held in the same file).
func TestTrainJobPatches(t *testing.T) {
	src := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt}
spec:
  mlPolicy: {numNodes: 2, jax: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  priorityClassName: low
                  containers:
                    - {name: node, image: jax:1, command: [python3, -m, train], env: [{name: A, value: rt}, {name: B, value: rt}]}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j}
spec:
  runtimeRef: {name: rt, kind: TrainingRuntime}
  trainer:
    env: [{name: B, value: job}]
  runtimePatches:
    - manager: me
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        priorityClassName: high
                        containers: [{name: node, env: [{name: A, value: patch}, {name: B, value: patch}]}]
`
	p, err := ParseWith("j.yaml", []byte(src), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Steps[0]
	got := map[string]any{"name": s.Name, "framework": s.Distributed.Framework, "nodes": s.Distributed.Nodes, "priority": s.Distributed.PriorityClass,
		"env": s.Env, "image": s.Image, "command": s.Resolved.Command}
	want := map[string]any{"name": "j", "framework": "jax", "nodes": 2, "priority": "high", "image": "jax:1",
		"env": []components.EnvVar{{Name: "A", Value: "patch"}, {Name: "B", Value: "job"}}, "command": []string{"python3", "-m", "train"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
	// A runtimeRef naming nothing: at its line.
	_, err = ParseWith("j.yaml", []byte(strings.Replace(src, "{name: rt, kind: TrainingRuntime}", "{name: rt}", 1)), LoadOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), `j.yaml:22:22: spec.runtimeRef.name: no ClusterTrainingRuntime named "rt"`) {
		t.Errorf("error %v", err)
	}
}

// TestKubeflowTrainJobs: Trainer's TrainJob examples load as pipelines of
// one distributed step with the runtimes Trainer ships; the one with an
// initializer is refused at its line.
func TestKubeflowTrainJobs(t *testing.T) {
	opts := kubeflowSet(t)
	for _, tc := range []struct {
		file, name string
		nodes      int
		gang       string
	}{
		{"01-multi-node.yaml", "multi-node-example", 3, ""},
		{"02-runtime-patches.yaml", "runtime-patches-example", 2, ""},
		{"03-kueue-integration.yaml", "kueue-example", 3, "kueue training-queue"},
		{"04-volcano-integration.yaml", "volcano-example", 4, "podGroup volcano"},
	} {
		p, err := LoadWith("trainer/testdata/kubeflow/examples/"+tc.file, opts)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		s := p.Steps[0]
		gang := ""
		if g := s.Distributed.Gang; g != nil && g.Kueue != nil {
			gang = "kueue " + g.Kueue.Queue
		} else if g != nil && g.PodGroup != nil {
			gang = "podGroup " + g.PodGroup.Scheduler
		}
		if len(p.Steps) != 1 || p.Metadata.Name != tc.name || s.Name != tc.name || s.Distributed.Nodes != tc.nodes || s.Distributed.Framework != "torch" || gang != tc.gang {
			t.Errorf("%s: %d steps, pipeline %q step %q nodes %d framework %q gang %q", tc.file, len(p.Steps), p.Metadata.Name, s.Name, s.Distributed.Nodes, s.Distributed.Framework, gang)
		}
	}
	_, err := LoadWith("trainer/testdata/kubeflow/examples/05-multi-step.yaml", opts)
	if err == nil || !strings.HasPrefix(err.Error(), "trainer/testdata/kubeflow/examples/05-multi-step.yaml:84:3: spec.initializer: pipectl does not run Trainer's initializers") {
		t.Errorf("05-multi-step: %v", err)
	}
}

// TestTrainJobComponent: a step's component may be a TrainJob file: its
// one distributed step runs in the pipeline after the steps it follows,
// its runtimeRef found in the TrainJob's file or the pipeline's runtimes;
// a runtimeRef naming nothing is refused at the TrainJob's line.
func TestTrainJobComponent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("rt.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: gpu}
spec:
  mlPolicy: {numNodes: 2, torch: {numProcPerNode: 1}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - {name: node, image: torch:1, command: [python3, train.py]}
`)
	write("job.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: fit}
spec:
  runtimeRef: {name: gpu}
  trainer:
    numNodes: 3
    env: [{name: LR, value: "0.1"}]
`)
	pipe := write("p.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
runtimes: [rt.yaml]
steps:
  - name: prep
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: prep}
      command: [echo, hi]
  - name: train
    component: job.yaml
    after: [prep]
`)
	p, err := Load(pipe)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("train.fit")
	if s == nil {
		t.Fatalf("no step train.fit in %v", p.byName)
	}
	got := map[string]any{"framework": s.Distributed.Framework, "nodes": s.Distributed.Nodes, "image": s.Image,
		"env": s.Env, "command": s.Resolved.Command, "after": s.After}
	want := map[string]any{"framework": "torch", "nodes": 3, "image": "torch:1",
		"env": []components.EnvVar{{Name: "LR", Value: "0.1"}}, "command": []string{"python3", "train.py"}, "after": []string{"prep"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step train.fit (-want +got):\n%s", diff)
	}
	// Without the pipeline's runtimes, the runtimeRef names nothing: at
	// the TrainJob file's line.
	src, _ := os.ReadFile(pipe)
	pipe = write("p2.yaml", strings.Replace(string(src), "runtimes: [rt.yaml]\n", "", 1))
	_, err = Load(pipe)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "job.yaml")+`:5:22: spec.runtimeRef.name: no ClusterTrainingRuntime named "gpu"`) {
		t.Errorf("error %v", err)
	}
}
