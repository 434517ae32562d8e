package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// A Kubeflow Trainer TrainJob file, with the GPU runtime it names (in the
// same file, as kubectl apply -f would create both), compiled and launched
// on the test bed: every rank pod gets the runtime's toleration of the GPU
// taint, its node selector (the GPU node) and its env, and the TrainJob's
// own env over the runtime's.
func TestLauncherTrainJobRuntime(t *testing.T) {
	c, ns, ctx := launcherSetup(t)
	l := newLab(t, c, ns, ctx)
	file := filepath.Join(t.TempDir(), "trainjob.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: shell-gpu
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  nodeSelector:
                    kubernetes.io/hostname: `+testbed.GPUNodeName+`
                  tolerations:
                    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
                  containers:
                    - name: node
                      image: e2e-shell:1
                      env:
                        - {name: FROM_RUNTIME, value: runtime-value}
                        - {name: OVERRIDDEN, value: runtime}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: gpu-trainjob
spec:
  runtimeRef:
    name: shell-gpu
  trainer:
    numNodes: 2
    env:
      - {name: OVERRIDDEN, value: trainjob}
    command: [sh, -c, 'echo "rank $RANK of $WORLD_SIZE: $FROM_RUNTIME $OVERRIDDEN"']
`), 0o644); err != nil {
		t.Fatal(err)
	}
	wf := l.compile(ctx, file)
	pod := wf.podOf(t, "gpu-trainjob", "trainjob-run", nil, filepath.Join(l.dir, "out"))
	o := l.observe(ctx)
	began := time.Now()
	p, logs := l.runPod(ctx, pod)
	t.Logf("launcher pod of the TrainJob ran %s", time.Since(began).Round(100*time.Millisecond))
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, logs)
	}
	for _, want := range []string{"[rank 0] rank 0 of 2: runtime-value trainjob", "[rank 1] rank 1 of 2: runtime-value trainjob"} {
		if !strings.Contains(logs, want) {
			t.Errorf("launcher log lacks %q:\n%s", want, logs)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pods) != 2 {
		t.Fatalf("%d rank pods seen, want 2", len(o.pods))
	}
	for _, rank := range o.pods {
		if rank.Spec.NodeName != testbed.GPUNodeName || rank.Spec.NodeSelector["kubernetes.io/hostname"] != testbed.GPUNodeName {
			t.Errorf("rank pod %s ran on %q with nodeSelector %v, want the runtime's: %s", rank.Name, rank.Spec.NodeName, rank.Spec.NodeSelector, testbed.GPUNodeName)
		}
		tolerated := false
		for _, tol := range rank.Spec.Tolerations {
			tolerated = tolerated || tol.Key == "nvidia.com/gpu" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
		}
		if !tolerated {
			t.Errorf("rank pod %s tolerations %+v lack the runtime's", rank.Name, rank.Spec.Tolerations)
		}
	}
	l.noJobSetLeft(ctx, 30*time.Second)
}
