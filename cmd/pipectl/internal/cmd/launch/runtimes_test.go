package launch

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// gpuRuntime is a GPU runtime as Kubeflow Trainer's guide writes one:
// tolerations for nvidia.com/gpu nodes, a GPU model node selector.
const gpuRuntime = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-gpu
spec:
  mlPolicy:
    numNodes: 2
    torch: {}
  podGroupPolicy:
    coscheduling: {scheduleTimeoutSeconds: 120}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  nodeSelector:
                    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
                  tolerations:
                    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
                      env:
                        - {name: NCCL_DEBUG, value: INFO}
                      resources:
                        limits: {nvidia.com/gpu: 4}
`

// dryRunJobSet runs launch --dry-run with args and decodes the JobSet.
func dryRunJobSet(t *testing.T, runtimes []string, args ...string) (*jobsetv1alpha2.JobSet, string) {
	t.Helper()
	f, out, _ := testFactory(t)
	f.Runtimes = runtimes
	if err := runLaunch(t, f, nil, append([]string{"--dry-run", "-o", "json"}, args...)...); err != nil {
		t.Fatal(err)
	}
	// With a PodGroup, a List of the JobSet and the PodGroup.
	raw := []byte(out.String())
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(raw, &list) == nil && len(list.Items) > 0 {
		raw = list.Items[0]
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal(raw, &js); err != nil || js.Kind != "JobSet" {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	return &js, out.String()
}

// stepEnv is the env of the step plan a rank pod runs (--step=B64).
func stepEnv(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	for _, a := range c.Args {
		if b64, ok := strings.CutPrefix(a, "--step="); ok {
			raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(b64, "="))
			if err != nil {
				if raw, err = base64.StdEncoding.DecodeString(b64); err != nil {
					t.Fatalf("--step: %v", err)
				}
			}
			var plan struct {
				Env []struct {
					Name  string `json:"name"`
					Value []struct {
						Lit string `json:"lit"`
					} `json:"value"`
				} `json:"env"`
			}
			if err := json.Unmarshal(raw, &plan); err != nil {
				t.Fatalf("--step: %v\n%s", err, raw)
			}
			env := map[string]string{}
			for _, e := range plan.Env {
				for _, v := range e.Value {
					env[e.Name] += v.Lit
				}
			}
			return env
		}
	}
	t.Fatalf("no --step in %q", c.Args)
	return nil
}

// TestDryRunRuntime: a step naming a runtime (listed by the pipeline)
// gets its tolerations, node selector, env, GPUs, image and pod group in
// every rank pod; the step's own nodes and env win.
func TestDryRunRuntime(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte(gpuRuntime), 0o644)
	file := filepath.Join(dir, "p.yaml")
	os.WriteFile(file, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: g}
runtimes: [gpu.yaml]
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: t}
      command: [python3, t.py]
    env: [{name: NCCL_DEBUG, value: WARN}, {name: EPOCHS, value: "3"}]
    distributed: {runtime: torch-gpu, nodes: 3}
`), 0o644)
	js, out := dryRunJobSet(t, nil, "-f", file, "--step", "train")
	job := js.Spec.ReplicatedJobs[0].Template.Spec
	pod := job.Template.Spec
	if diff := cmp.Diff(map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, pod.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	hasGPUToleration := false
	for _, tol := range pod.Tolerations {
		hasGPUToleration = hasGPUToleration || tol.Key == "nvidia.com/gpu" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
	}
	if !hasGPUToleration {
		t.Errorf("tolerations %+v: want the runtime's nvidia.com/gpu Exists NoSchedule", pod.Tolerations)
	}
	rank := pod.Containers[0]
	if rank.Image != "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime" || rank.Resources.Limits.Name("nvidia.com/gpu", "").String() != "4" {
		t.Errorf("rank container image %q limits %v", rank.Image, rank.Resources.Limits)
	}
	if *job.Completions != 3 {
		t.Errorf("completions %d: want the step's 3 nodes over the runtime's 2", *job.Completions)
	}
	if diff := cmp.Diff(map[string]string{"NCCL_DEBUG": "WARN", "EPOCHS": "3"}, stepEnv(t, rank)); diff != "" {
		t.Errorf("the program's env (-want +got):\n%s", diff)
	}
	if pod.SchedulerName != "scheduler-plugins-scheduler" || !strings.Contains(out, `"kind": "PodGroup"`) || !strings.Contains(out, `"scheduleTimeoutSeconds": 120`) {
		t.Errorf("scheduler %q: want the runtime's coscheduling podGroupPolicy, a PodGroup of 120s timeout:\n%s", pod.SchedulerName, out)
	}
}

// TestDryRunTrainJob: a TrainJob file needs no --step; its runtime comes
// from --runtimes; its runtimePatches' tolerations replace the runtime's.
func TestDryRunTrainJob(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte(gpuRuntime), 0o644)
	file := filepath.Join(dir, "job.yaml")
	os.WriteFile(file, []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fine-tune
  labels: {kueue.x-k8s.io/queue-name: gpus}
spec:
  runtimeRef: {name: torch-gpu}
  trainer:
    numNodes: 4
    command: [python3, train.py]
    env: [{name: LR, value: "0.1"}]
  runtimePatches:
    - manager: platform
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        tolerations: [{key: spot, operator: Exists}]
`), 0o644)
	js, _ := dryRunJobSet(t, []string{filepath.Join(dir, "gpu.yaml")}, "-f", file)
	pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	if js.Labels["kueue.x-k8s.io/queue-name"] != "gpus" || *js.Spec.ReplicatedJobs[0].Template.Spec.Completions != 4 {
		t.Errorf("labels %v completions %d: want Kueue's queue gpus and 4 nodes", js.Labels, *js.Spec.ReplicatedJobs[0].Template.Spec.Completions)
	}
	var keys []string
	for _, tol := range pod.Tolerations {
		keys = append(keys, tol.Key)
	}
	if !strings.Contains(strings.Join(keys, ","), "spot") || strings.Contains(strings.Join(keys, ","), "nvidia.com/gpu,") {
		t.Errorf("tolerations %v: want the patch's spot", keys)
	}
	if pod.NodeSelector["nvidia.com/gpu.product"] != "NVIDIA-A100-SXM4-80GB" {
		t.Errorf("nodeSelector %v: want the runtime's", pod.NodeSelector)
	}
	if diff := cmp.Diff(map[string]string{"NCCL_DEBUG": "INFO", "LR": "0.1"}, stepEnv(t, pod.Containers[0])); diff != "" {
		t.Errorf("the program's env (-want +got):\n%s", diff)
	}
}
