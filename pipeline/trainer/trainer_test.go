package trainer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKubeflowRuntimesLoad reads every runtime Kubeflow Trainer ships.
func TestKubeflowRuntimesLoad(t *testing.T) {
	s, err := ReadRuntimes([]string{"testdata/kubeflow/runtimes"})
	if err != nil {
		t.Fatalf("ReadRuntimes: %v", err)
	}
	want := []string{
		"ClusterTrainingRuntime/deepspeed-distributed", "ClusterTrainingRuntime/jax-distributed",
		"ClusterTrainingRuntime/mlx-distributed",
		"ClusterTrainingRuntime/torch-distributed", "ClusterTrainingRuntime/torch-distributed-with-cache",
		"ClusterTrainingRuntime/torchtune-llama3.2-1b", "ClusterTrainingRuntime/torchtune-llama3.2-3b", "ClusterTrainingRuntime/torchtune-qwen2.5-1.5b",
		"ClusterTrainingRuntime/xgboost-distributed",
	}
	if diff := cmp.Diff(want, s.Names()); diff != "" {
		t.Fatalf("runtimes (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name, framework, image string
		procs                  int
		refused                int
	}{
		{"torch-distributed", FrameworkTorch, "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", 0, 0},
		{"deepspeed-distributed", FrameworkMPI, "ghcr.io/kubeflow/trainer/deepspeed-runtime", 1, 0},
		{"mlx-distributed", FrameworkMPI, "ghcr.io/kubeflow/trainer/mlx-runtime", 1, 0},
		{"jax-distributed", FrameworkJAX, "nvcr.io/nvidia/jax:25.10-py3", 0, 0},
		{"xgboost-distributed", FrameworkXGBoost, "ghcr.io/kubeflow/trainer/xgboost-runtime", 0, 0},
		// dataset-initializer job; the node's env valueFrom
		{"torch-distributed-with-cache", FrameworkTorch, "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", 0, 2},
		// volumeClaimPolicies, two initializer jobs, the node's volumeMounts
		{"torchtune-llama3.2-1b", FrameworkTorch, "ghcr.io/kubeflow/trainer/torchtune-trainer", 0, 4},
	} {
		r, err := s.Lookup("", tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if r.Framework != tc.framework || r.Pod.Image != tc.image || r.ProcsPerNode != tc.procs || r.NumNodes != 1 || len(r.Refused) != tc.refused {
			t.Errorf("%s: framework %q image %q procs %d nodes %d refused %v", tc.name, r.Framework, r.Pod.Image, r.ProcsPerNode, r.NumNodes, r.Refused)
		}
	}
	ds, _ := s.Lookup(KindClusterRuntime, "deepspeed-distributed")
	if ds.Pod.Command != nil || len(ds.Warnings) == 0 {
		t.Errorf("deepspeed: the nodes' sshd command is not the step's: command %q, warnings %q", ds.Pod.Command, ds.Warnings)
	}
	tt, _ := s.Lookup("", "torchtune-llama3.2-1b")
	got := tt.Refused[0].Error()
	if !strings.HasPrefix(got, "testdata/kubeflow/runtimes/llama3_2_1B.yaml:27:7: spec.template.spec.volumeClaimPolicies: not supported") {
		t.Errorf("refused: %s", got)
	}
}

// TestKubeflowTrainJobsParse reads the TrainJobs of Trainer's examples.
func TestKubeflowTrainJobsParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/kubeflow/examples/*.yaml")
	if len(files) != 5 {
		t.Fatalf("examples: %v", files)
	}
	jobs := map[string]*TrainJob{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !IsTrainJobFile(data) {
			t.Errorf("%s: not a TrainJob file", f)
		}
		docs, err := Docs(f, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.Kind == KindTrainJob {
				j, err := ParseTrainJob(f, d.Root)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				jobs[j.Name] = j
			}
		}
	}
	mn := jobs["multi-node-example"]
	if mn.NumNodes != 3 || mn.RuntimeName != "torch-distributed" || mn.Trainer.Command[0] != "torchrun" || len(mn.Refused) != 0 {
		t.Errorf("multi-node: %+v", mn)
	}
	rp := jobs["runtime-patches-example"]
	wantPatch := Pod{NodeSelector: map[string]string{"node-type": "training"},
		Tolerations: []Toleration{{Key: "training-workload", Operator: "Equal", Value: "true", Effect: "NoSchedule"}}}
	if diff := cmp.Diff(wantPatch, rp.Patch); diff != "" {
		t.Errorf("runtime patches (-want +got):\n%s", diff)
	}
	if rp.Trainer.Limits["memory"] != "8Gi" || len(rp.Trainer.Env) != 2 || len(rp.Warnings) != 2 {
		t.Errorf("runtime-patches: %+v", rp)
	}
	if q := jobs["kueue-example"].Queue; q != "training-queue" {
		t.Errorf("kueue queue %q", q)
	}
	ms := jobs["multi-step-example"]
	if len(ms.Refused) != 1 || !strings.Contains(ms.Refused[0].Error(), "05-multi-step.yaml:84:3: spec.initializer: pipectl does not run Trainer's initializers") {
		t.Errorf("multi-step refused: %v", ms.Refused)
	}
}

// TestBadRuntime: an unknown field is an error at its line; a field of
// Kubernetes' types pipectl cannot honour is refused, at its line.
func TestBadRuntime(t *testing.T) {
	src := `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: gpu}
spec:
  mlPolicy: {numNodes: 2, torch: {}, jax: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  hostNetwork: true
                  tolerashuns: []
                  containers:
                    - name: node
                      image: x
                      env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
`
	docs, err := Docs("gpu.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRuntime("gpu.yaml", docs[0].Root)
	want := []string{
		`gpu.yaml:5:38: spec.mlPolicy.jax: mlPolicy names torch already: expected one of torch, mpi, jax, xgboost`,
		`gpu.yaml:15:19: spec.template.spec.replicatedJobs[0].template.spec.template.spec.tolerashuns: unknown field "tolerashuns" (expected one of: affinity, containers, nodeSelector, priorityClassName, securityContext, serviceAccountName, tolerations)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("errors:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	var refused []string
	for _, e := range r.Refused {
		refused = append(refused, e.Error())
	}
	wantRefused := []string{
		`gpu.yaml:14:19: spec.template.spec.replicatedJobs[0].template.spec.template.spec.hostNetwork: not supported by pipectl (it cannot honour this field of PodSpec)`,
		`gpu.yaml:19:39: spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].env[0].valueFrom: not supported by pipectl: give the value, or a Secret through the step's secrets:`,
	}
	if diff := cmp.Diff(wantRefused, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
}
