package jobset

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/plan"
)

func testOptions() BuildOptions {
	return BuildOptions{
		Namespace: "ml", Step: "train",
		Exec: wire.Args{
			Run: "run-1", Component: "COMP", Step: "STEP",
			Params:   wire.Values(map[string]string{"epochs": "3", "tmpl": "{{not}}"}),
			Upstream: wire.Values(map[string]string{"threshold": "0.5"}),
		},
		Command: []string{"python3", "train.py"},
	}
}

func withStoreEnv(s *plan.Launch) *plan.Launch {
	s.Env = []corev1.EnvVar{{Name: "PIPECTL_ARTIFACTS", Value: "s3://ml/runs"}}
	return s
}

func index() *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
}

// rankEnv is the env of a rank container of JobSet js with nodes × procs.
func rankEnv(js string, nodes, procs int, port string, perPod bool) []corev1.EnvVar {
	n, p, w := itoa(nodes), itoa(procs), itoa(nodes*procs)
	addr := js + "-rank-0-0." + js
	env := []corev1.EnvVar{
		{Name: "WORLD_SIZE", Value: w}, {Name: "LOCAL_WORLD_SIZE", Value: p}, {Name: "NODE_RANK", ValueFrom: index()},
		{Name: "NNODES", Value: n}, {Name: "MASTER_ADDR", Value: addr}, {Name: "MASTER_PORT", Value: port},
		{Name: "PET_NNODES", Value: n}, {Name: "PET_NPROC_PER_NODE", Value: p}, {Name: "PET_NODE_RANK", ValueFrom: index()},
		{Name: "PET_MASTER_ADDR", Value: addr}, {Name: "PET_MASTER_PORT", Value: port},
	}
	if perPod {
		env = append(env, corev1.EnvVar{Name: "RANK", ValueFrom: index()}, corev1.EnvVar{Name: "LOCAL_RANK", Value: "0"})
	}
	return env
}

func itoa(n int) string { return strconv.Itoa(n) }

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

func gpuResources(name string, n int64) corev1.ResourceRequirements {
	return makeSpec(1, 1).GPU(name, n).Resources
}

func TestBuildJobSet(t *testing.T) {
	gpuTol := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	userTol := corev1.Toleration{Key: "team", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name string
		spec *plan.Launch
		opts func(*BuildOptions)
		want *jobSetWrapper
	}{{
		name: "one rank per pod: the pod is the rank",
		spec: makeSpec(2, 1).MaxRestarts(1).Obj(),
		want: makeJobSet("run-1-train", 2).MaxRestarts(1).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...),
	}, {
		name: "several ranks per pod: exec spawns them, the pod has the node's env",
		spec: makeSpec(4, 8).Port(23456).Obj(),
		want: makeJobSet("run-1-train", 4).RankEnv(rankEnv("run-1-train", 4, 8, "23456", false)...),
	}, {
		name: "torchrun: one process per pod with the PET_* env",
		spec: makeSpec(2, 4).Obj(),
		opts: func(o *BuildOptions) { o.Command = []string{"torchrun", "train.py"} },
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 4, "29500", false)...),
	}, {
		name: "GPUs: the plan's resources and tolerations (the GPU taint's included) are the pod's",
		spec: makeSpec(2, 1).GPU("nvidia.com/gpu", 8).Tolerations(userTol, gpuTol).Obj(),
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			Resources(gpuResources("nvidia.com/gpu", 8)).Tolerations(userTol, gpuTol),
	}, {
		name: "/dev/shm: memory-backed, sized as the plan says",
		spec: makeSpec(2, 1).ShmSize("32Gi").Obj(),
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).Shm("32Gi"),
	}, {
		name: "kueue: queue label, created suspended",
		spec: makeSpec(2, 1).Kueue("team-a").Obj(),
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			Label("kueue.x-k8s.io/queue-name", "team-a").Suspend(true),
	}, {
		name: "coscheduling: pod group label and scheduler",
		spec: makeSpec(2, 1).PodGroup("coscheduling", 5*time.Minute).Obj(),
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			PodLabel("scheduling.x-k8s.io/pod-group", "run-1-train").SchedulerName("scheduler-plugins-scheduler"),
	}, {
		name: "volcano: pod group annotation and scheduler",
		spec: makeSpec(2, 1).PodGroup("volcano", 0).Obj(),
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			PodAnnotation("scheduling.k8s.io/group-name", "run-1-train").SchedulerName("volcano"),
	}, {
		name: "owned by the launcher pod",
		spec: makeSpec(2, 1).Obj(),
		opts: func(o *BuildOptions) { o.Owner = &Owner{Name: "wf-1-train-launcher", UID: "1234-5678"} },
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			Owner("wf-1-train-launcher", "1234-5678"),
	}, {
		name: "a loop iteration: a JobSet of its own, labelled with the step and the index; the ranks run that iteration",
		spec: makeSpec(2, 1).Obj(),
		opts: func(o *BuildOptions) { o.Step, o.Exec.Iteration = "train[12]", "12" },
		want: makeJobSet("run-1-train-12", 2).RankEnv(rankEnv("run-1-train-12", 2, 1, "29500", true)...).
			StepLabel(wire.LabelIteration, "12").ArgsBefore("--iteration=12"),
	}, {
		name: "a finally step: the ranks get the run's outcome, $ escaped from Kubernetes",
		spec: makeSpec(2, 1).Obj(),
		opts: func(o *BuildOptions) {
			o.Exec.ArgoStatus, o.Exec.ArgoFailures, o.Exec.ArgoSteps = "Failed", `"[{\"message\":\"$(HOME)\"}]"`, "W3t9XQ=="
		},
		want: makeJobSet("run-1-train", 2).RankEnv(rankEnv("run-1-train", 2, 1, "29500", true)...).
			ArgsBefore("--argo-status=Failed", `--argo-failures="[{\"message\":\"$$(HOME)\"}]"`, "--argo-steps=W3t9XQ=="),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			if tc.opts != nil {
				tc.opts(&o)
			}
			got := BuildJobSet(withStoreEnv(tc.spec), o)
			if diff := cmp.Diff(tc.want.Obj(), got); diff != "" {
				t.Errorf("BuildJobSet (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobSetName(t *testing.T) {
	long := strings.Repeat("a", 40)
	cases := []struct {
		run, step string
		nodes     int
		want      string
	}{
		{"attrition-x7k2p", "train", 2, "attrition-x7k2p-train"},
		{"1run", "train", 2, "p-1run-train"},
		{"Run.With.Dots", "train", 2, "run-with-dots-train"},
		// 63 - len("-rank-0-") - len("1") - len("-abcde") = 48 characters.
		{long, "train-the-big-model", 2, strings.Repeat("a", 39) + "-" + hash8(long+"-train-the-big-model")},
		{long, "train-the-big-model", 100, strings.Repeat("a", 38) + "-" + hash8(long+"-train-the-big-model")},
		{"sweep-x7k2p", "trial[0]", 2, "sweep-x7k2p-trial-0"},
		{"sweep-x7k2p", "trial[10]", 2, "sweep-x7k2p-trial-10"},
		// Long names keep iterations apart by their hash.
		{long, "train-the-big-model[3]", 2, strings.Repeat("a", 39) + "-" + hash8(long+"-train-the-big-model-3")},
	}
	for _, tc := range cases {
		got := JobSetName(tc.run, tc.step, tc.nodes)
		if got != tc.want {
			t.Errorf("JobSetName(%q, %q, %d) = %q, want %q", tc.run, tc.step, tc.nodes, got, tc.want)
		}
	}
	// Every generated name fits, whatever the lengths: the longest pod name
	// (with the 5 random characters Kubernetes adds) is a DNS-1035 label.
	for _, nodes := range []int{1, 9, 10, 1000} {
		for _, run := range []string{"r", long, long + long} {
			js := JobSetName(run, "a-very-long-step-name-for-the-trainer", nodes)
			pod := js + "-rank-0-" + itoa(nodes-1) + "-abcde"
			if msgs := validation.IsDNS1035Label(pod); len(msgs) > 0 {
				t.Errorf("nodes %d run %q: pod name %q: %v", nodes, run, pod, msgs)
			}
			if msgs := validation.IsDNS1035Label(js); len(msgs) > 0 {
				t.Errorf("JobSet name %q: %v", js, msgs)
			}
		}
	}
	// Names cut short differ by their hash.
	a, b := JobSetName(long+"1", "train", 2), JobSetName(long+"2", "train", 2)
	if a == b {
		t.Errorf("two long names give the same JobSet name %q", a)
	}
}

func TestBuildPodGroup(t *testing.T) {
	spec := withStoreEnv(makeSpec(4, 1).GPU("nvidia.com/gpu", 2).PodGroup("coscheduling", 90*time.Second).Obj())
	o := testOptions()
	o.Owner = &Owner{Name: "launcher-pod", UID: "u-1"}
	got := BuildPodGroup(spec, o)
	want := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{
			"name": "run-1-train", "namespace": "ml",
			"labels": map[string]any{wire.LabelPipeline: "attrition", wire.LabelRun: "run-1", wire.LabelStep: "train"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Pod", "name": "launcher-pod", "uid": "u-1", "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"minMember":              int64(4),
			"minResources":           map[string]any{"cpu": "8", "nvidia.com/gpu": "8"},
			"scheduleTimeoutSeconds": int64(90),
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildPodGroup coscheduling (-want +got):\n%s", diff)
	}

	spec = makeSpec(2, 1).PodGroup("volcano", 5*time.Minute).Obj()
	spec.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Gi")}
	got = BuildPodGroup(spec, testOptions())
	want = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{
			"name": "run-1-train", "namespace": "ml",
			"labels": map[string]any{wire.LabelPipeline: "attrition", wire.LabelRun: "run-1", wire.LabelStep: "train"},
		},
		"spec": map[string]any{"minMember": int64(2), "minResources": map[string]any{"memory": "6Gi"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildPodGroup volcano (-want +got):\n%s", diff)
	}
	if pg := BuildPodGroup(makeSpec(2, 1).Kueue("q").Obj(), testOptions()); pg != nil {
		t.Errorf("BuildPodGroup for a Kueue gang = %v, want nil", pg)
	}
}

// TestRankEnvMatchesTopology: the env of the pod of node n, with the
// completion index resolved, is exactly Topology.RankEnv / NodeEnv of the
// step's framework (the table the local gang uses).
func TestRankEnvMatchesTopology(t *testing.T) {
	py := []string{"python3", "x.py"}
	for _, tc := range []struct {
		nodes, procs int
		command      []string
		framework    rankenv.Framework
		perPod       bool // the pod is one rank process
	}{
		{3, 1, py, "", true}, {2, 4, []string{"torchrun", "x.py"}, "", false}, {2, 4, py, "", false},
		{2, 1, py, rankenv.JAX, false}, {3, 1, py, rankenv.XGBoost, true}, {2, 2, py, rankenv.XGBoost, false},
	} {
		spec := makeSpec(tc.nodes, tc.procs).Framework(tc.framework).Obj()
		topo := rankenv.Topology{Nodes: tc.nodes, ProcsPerNode: tc.procs, MasterAddr: MasterAddr("js"), MasterPort: DefaultPort, Framework: tc.framework}
		for node := 0; node < tc.nodes; node++ {
			var got []string
			for _, e := range RankEnvVars(&spec.Distributed, "js", tc.command) {
				v := e.Value
				if e.ValueFrom != nil {
					v = itoa(node)
				}
				got = append(got, e.Name+"="+v)
			}
			want := topo.NodeEnv(node)
			if tc.perPod {
				want = topo.RankEnv(node, 0)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %d×%d %v node %d (-want +got):\n%s", tc.framework, tc.nodes, tc.procs, tc.command, node, diff)
			}
		}
	}
}
