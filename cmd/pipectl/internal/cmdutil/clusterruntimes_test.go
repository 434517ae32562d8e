package cmdutil

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"pipectl.dev/pipectl/pipeline/trainer"
)

// TestClusterRuntime reads a runtime from the cluster as a file would
// give it, server metadata left out; a name the cluster lacks is nil.
func TestClusterRuntime(t *testing.T) {
	spec := map[string]any{
		"mlPolicy": map[string]any{"numNodes": int64(2), "xgboost": map[string]any{}},
		"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "node",
			"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"tolerations": []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
				"containers":  []any{map[string]any{"name": "node", "image": "xgb:1"}},
			}}}},
		}}}},
	}
	ctr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
		"metadata": map[string]any{"name": "xgb", "uid": "1234", "resourceVersion": "7", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":     spec,
	}}
	tr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
		"metadata": map[string]any{"name": "team", "namespace": "ml"}, "spec": spec,
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		clusterRuntimesGVR: "ClusterTrainingRuntimeList", runtimesGVR: "TrainingRuntimeList",
	}, ctr, tr)
	ctx := context.Background()
	r, err := ClusterRuntime(ctx, dyn, "ml", "", "xgb")
	if err != nil || r == nil {
		t.Fatalf("ClusterRuntime: %v, %v", r, err)
	}
	want := []trainer.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}
	if diff := cmp.Diff(want, r.Pod.Tolerations); diff != "" || r.Framework != "xgboost" || r.NumNodes != 2 || r.Pod.Image != "xgb:1" || r.File != "cluster ClusterTrainingRuntime/xgb" {
		t.Errorf("runtime %+v (tolerations -want +got):\n%s", r, diff)
	}
	if r, err := ClusterRuntime(ctx, dyn, "ml", trainer.KindRuntime, "team"); err != nil || r == nil || r.Name != "team" {
		t.Errorf("TrainingRuntime ml/team: %+v, %v", r, err)
	}
	if r, err := ClusterRuntime(ctx, dyn, "other", "", "team"); err != nil || r != nil {
		t.Errorf("TrainingRuntime team of another namespace: %+v, %v; want none", r, err)
	}
}
