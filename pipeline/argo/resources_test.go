package argo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

const runtimeResources = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: r}
params:
  cpu: {type: string, default: 500m}
  gpus: {type: int, default: 0}
steps:
  - name: sizer
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: n}, image: img:1, command: [prog, "{{outputs.mem.path}}", "{{outputs.kind.path}}"], outputs: [{name: mem, type: string}, {name: kind, type: string}]}
  - name: train
    component: &c {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: img:1, command: [prog]}
    resources: {cpu: "{{params.cpu}}", memory: "{{steps.sizer.outputs.mem}}", gpu: "{{params.gpus}}", gpuResource: "{{steps.sizer.outputs.kind}}"}
    tolerations: [{key: pool, operator: Equal, value: a, effect: NoSchedule}]
  - name: count-only
    component: *c
    resources: {cpu: "1", gpu: "{{params.gpus}}"}
`

// TestRuntimeResources: resources given at run time are a pod spec patch of
// the step's template; evaluated and applied as the Argo controller does,
// a value pipectl accepts sizes the pod (with the GPU's toleration when
// GPUs are requested), and one it does not is left out, whatever it
// holds (exec fails the step on it, as a local run does).
func TestRuntimeResources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(runtimeResources), 0o644); err != nil {
		t.Fatal(err)
	}
	wf, _ := compileFile(t, path, testOptions())
	lint(t, wf)
	tmpl := func(task string) *wfv1.Template {
		for _, tk := range wf.Spec.Templates[0].DAG.Tasks {
			if tk.Name == task {
				return wf.GetTemplateByName(tk.Template)
			}
		}
		t.Fatalf("no task %s", task)
		return nil
	}
	train, countOnly := tmpl("train"), tmpl("count-only")
	if tmpl("sizer").PodSpecPatch != "" {
		t.Errorf("sizer has a pod spec patch: %s", tmpl("sizer").PodSpecPatch)
	}
	// The memory and the GPU resource come from sizer: template inputs.
	var inputs []string
	for _, p := range train.Inputs.Parameters {
		inputs = append(inputs, p.Name)
	}
	if want := []string{"step", "in-resource-gpuResource", "in-resource-memory"}; !cmp.Equal(want, inputs) {
		t.Errorf("train's inputs (-want +got):\n%s", cmp.Diff(want, inputs))
	}

	q := resource.MustParse
	tols := []corev1.Toleration{{Key: "pool", Operator: "Equal", Value: "a", Effect: "NoSchedule"}}
	gpuTol := corev1.Toleration{Key: "amd.com/gpu", Operator: "Exists", Effect: "NoSchedule"}
	for name, tc := range map[string]struct {
		tmpl                 *wfv1.Template
		cpu, gpus, mem, kind string
		want                 corev1.ResourceList
		tols                 []corev1.Toleration
	}{
		"all":            {train, "500m", "2", "15G", "amd.com/gpu", corev1.ResourceList{"cpu": q("500m"), "memory": q("15G"), "amd.com/gpu": q("2")}, append(tols[:1:1], gpuTol)},
		"no gpus":        {train, "2", "0", "1Gi", "amd.com/gpu", corev1.ResourceList{"cpu": q("2"), "memory": q("1Gi")}, tols},
		"default gpu":    {train, "1", "1", "", "", corev1.ResourceList{"cpu": q("1"), "nvidia.com/gpu": q("1")}, append(tols[:1:1], corev1.Toleration{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"})},
		"not values":     {train, "1 ", "-1", `1", "x": "y`, "NVIDIA_TESLA_P4", corev1.ResourceList{}, tols},
		"placeholders":   {train, "{{workflow.name}}", "{{pod.name}}", "$(HOME)", "kubernetes.io/gpu", corev1.ResourceList{}, tols},
		"too many gpus":  {train, "", "1025", "", "amd.com/gpu", corev1.ResourceList{}, tols},
		"count only":     {countOnly, "", "3", "", "", corev1.ResourceList{"cpu": q("1"), "nvidia.com/gpu": q("3")}, []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}},
		"count only, 0":  {countOnly, "", "0", "", "", corev1.ResourceList{"cpu": q("1")}, nil},
		"count only, no": {countOnly, "", "two", "", "", corev1.ResourceList{"cpu": q("1")}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			// The controller substitutes the template's variables (the
			// workflow parameters as given, the inputs as the upstream
			// step wrote them) and applies the patch to the pod's spec.
			scope := map[string]any{"workflow.parameters.cpu": tc.cpu, "workflow.parameters.gpus": tc.gpus,
				"inputs.parameters.in-resource-memory": tc.mem, "inputs.parameters.in-resource-gpuResource": tc.kind}
			patch := evalWhen(t, tc.tmpl.PodSpecPatch, scope)
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: *tc.tmpl.Container.Resources.DeepCopy()}}, Tolerations: tc.tmpl.Tolerations}
			got, err := applyPodSpecPatch(spec, patch)
			if err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			res := got.Containers[0].Resources
			if res.Limits == nil {
				res.Limits = corev1.ResourceList{}
			}
			if diff := cmp.Diff(tc.want, res.Limits); diff != "" {
				t.Errorf("limits (-want +got), patch %s:\n%s", patch, diff)
			}
			if !cmp.Equal(res.Limits, res.Requests) && len(res.Limits) > 0 {
				t.Errorf("requests %v, want the limits %v", res.Requests, res.Limits)
			}
			if diff := cmp.Diff(tc.tols, got.Tolerations, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("tolerations (-want +got), patch %s:\n%s", patch, diff)
			}
			// exec accepts exactly the values the patch sets: a CPU or
			// memory value is set when pipectl accepts it (and is not
			// ""), GPUs when both the count (not 0) and the name are.
			checked := func(f, v string) bool { return v != "" && pipeline.CheckRuntimeResource(f, v) == nil }
			if tc.tmpl == train {
				for _, f := range []string{"cpu", "memory"} {
					v := map[string]string{"cpu": tc.cpu, "memory": tc.mem}[f]
					if _, set := res.Limits[corev1.ResourceName(f)]; set != checked(f, v) {
						t.Errorf("%s %q: accepted %v, set in the pod %v", f, v, checked(f, v), set)
					}
				}
			}
			gpus := checked("gpu", tc.gpus) && tc.gpus != "0" && (tc.tmpl == countOnly || tc.kind == "" || checked("gpuResource", tc.kind))
			_, nv := res.Limits["nvidia.com/gpu"]
			_, amd := res.Limits["amd.com/gpu"]
			if set := nv || amd; set != gpus {
				t.Errorf("gpus %q of %q: accepted %v, set in the pod %v", tc.gpus, tc.kind, gpus, set)
			}
		})
	}
	b, _ := json.Marshal(train.PodSpecPatch)
	t.Logf("patch: %s", b)
}

// TestRuntimeResourcesWiring: the values travel as the step's params and
// upstream values, and exec checks them before the program starts.
func TestRuntimeResourcesWiring(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(runtimeResources), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := plan.Build(p, "train")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sp.Wiring.ParamNames(), []string{"cpu", "gpus"}; !cmp.Equal(got, want) {
		t.Errorf("params %v, want %v", got, want)
	}
	if got, want := sp.Deps, []string{"sizer"}; !cmp.Equal(got, want) {
		t.Errorf("deps %v, want %v", got, want)
	}
	v := plan.Values{Run: "r", Params: map[string]string{"cpu": "500m", "gpus": "1"}, Upstream: map[string]string{"resource-memory": "lots", "resource-gpuResource": "amd.com/gpu"}}
	_, err = sp.Wiring.ResourceValues(v)
	if want := `resources.memory: "lots" is not a quantity (such as 500m, 2, 1.5, 4Gi or 15G: digits, then an optional exponent e3, binary suffix Ki, Mi, Gi, Ti, Pi, Ei or decimal suffix n, u, m, k, M, G, T, P, E), given by output mem of step sizer`; err == nil || err.Error() != want {
		t.Errorf("err %v, want %s", err, want)
	}
	v.Upstream["resource-memory"] = "2Gi"
	got, err := sp.Wiring.ResourceValues(v)
	if want := map[string]string{"cpu": "500m", "memory": "2Gi", "gpu": "1", "gpuResource": "amd.com/gpu"}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("values %v, %v; want %v", got, err, want)
	}
}

// applyPodSpecPatch is Argo's workflow/util.ApplyPodSpecPatch (its package
// imports Argo's server): the patch must be a PodSpec, and is merged into
// the pod's spec as a strategic merge patch.
func applyPodSpecPatch(spec corev1.PodSpec, patch string) (*corev1.PodSpec, error) {
	if err := json.Unmarshal([]byte(patch), &corev1.PodSpec{}); err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if b, err = strategicpatch.StrategicMergePatch(b, []byte(patch), corev1.PodSpec{}); err != nil {
		return nil, err
	}
	var out corev1.PodSpec
	return &out, json.Unmarshal(b, &out)
}
