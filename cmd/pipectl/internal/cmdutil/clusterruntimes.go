package cmdutil

import (
	"context"
	"fmt"

	"gopkg.in/yaml.v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"pipectl.dev/pipectl/pipeline/trainer"
)

// Trainer's runtime resources, as the cluster serves them.
var (
	clusterRuntimesGVR = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "clustertrainingruntimes"}
	runtimesGVR        = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainingruntimes"}
)

// ClusterRuntime reads the runtime called name of kind ("" for either, a
// ClusterTrainingRuntime first) from the cluster (read-only; no Trainer
// controller needed, only its CRDs): nil, nil when it has none.
func ClusterRuntime(ctx context.Context, dyn dynamic.Interface, namespace, kind, name string) (*trainer.Runtime, error) {
	for _, k := range []string{trainer.KindClusterRuntime, trainer.KindRuntime} {
		if kind != "" && kind != k {
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(clusterRuntimesGVR)
		where := k + "/" + name
		if k == trainer.KindRuntime {
			ri, where = dyn.Resource(runtimesGVR).Namespace(namespace), k+"/"+namespace+"/"+name
		}
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // no such runtime, or no Trainer CRDs
		}
		if err != nil {
			return nil, fmt.Errorf("read %s from the cluster: %w", where, err)
		}
		// Only what describes the runtime: not the server's metadata.
		o := obj.Object
		doc := map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": map[string]any{"name": obj.GetName()}, "spec": o["spec"]}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		docs, err := trainer.Docs("cluster "+where, data)
		if err != nil {
			return nil, err
		}
		return trainer.ParseRuntime("cluster "+where, docs[0].Root)
	}
	return nil, nil
}

// clusterFallback is the Fallback of the runtimes of a run on the cluster.
func (f *Factory) clusterFallback(kind, name string) (*trainer.Runtime, error) {
	c, err := f.Clients()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	return ClusterRuntime(context.Background(), dyn, c.Namespace, kind, name)
}
