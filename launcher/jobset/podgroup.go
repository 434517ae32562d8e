package jobset

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"pipectl.dev/pipectl/pipeline/plan"
)

// PodGroup resources, by scheduler.
var (
	// CoschedulingPodGroups are the PodGroups of the scheduler-plugins
	// coscheduling plugin.
	CoschedulingPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
	// VolcanoPodGroups are Volcano's PodGroups.
	VolcanoPodGroups = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

// PodGroupResource returns the resource of the PodGroups of scheduler.
func PodGroupResource(scheduler string) schema.GroupVersionResource {
	if scheduler == SchedulerVolcano {
		return VolcanoPodGroups
	}
	return CoschedulingPodGroups
}

// PodGroupResourceOf returns the resource of a PodGroup BuildPodGroup made.
func PodGroupResourceOf(pg *unstructured.Unstructured) schema.GroupVersionResource {
	if pg.GroupVersionKind().Group == VolcanoPodGroups.Group {
		return VolcanoPodGroups
	}
	return CoschedulingPodGroups
}

// BuildPodGroup returns the PodGroup a podGroup gang needs, named after the
// JobSet (whose pods carry its label or annotation), or nil when the spec
// has no podGroup gang. minMember is the number of rank pods, minResources
// their requests summed. The schedule timeout is the coscheduling
// PodGroup's scheduleTimeoutSeconds; Volcano's PodGroup has no such field.
func BuildPodGroup(spec *plan.Launch, o BuildOptions) *unstructured.Unstructured {
	g := spec.Gang
	if g == nil || g.PodGroupScheduler == "" {
		return nil
	}
	nodes := max(spec.Nodes, 1)
	name := JobSetName(o.Exec.Run, o.Step, nodes)
	gvr := PodGroupResource(g.PodGroupScheduler)
	obj := map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       "PodGroup",
		"metadata": map[string]any{
			"name":   name,
			"labels": toAny(stepLabels(spec, o)),
		},
	}
	meta := obj["metadata"].(map[string]any)
	if o.Namespace != "" {
		meta["namespace"] = o.Namespace
	}
	if refs := ownerReferences(o.Owner); len(refs) > 0 {
		meta["ownerReferences"] = []any{map[string]any{
			"apiVersion":         refs[0].APIVersion,
			"kind":               refs[0].Kind,
			"name":               refs[0].Name,
			"uid":                string(refs[0].UID),
			"blockOwnerDeletion": true,
		}}
	}
	pgSpec := map[string]any{"minMember": int64(nodes)}
	req := spec.Resources.Requests
	if len(req) == 0 {
		req = spec.Resources.Limits
	}
	if total := totalResources(req, nodes); len(total) > 0 {
		res := map[string]any{}
		for k, q := range total {
			res[string(k)] = q.String()
		}
		pgSpec["minResources"] = res
	}
	if d := g.PodGroupTimeout.Duration; g.PodGroupScheduler != SchedulerVolcano && d > 0 {
		pgSpec["scheduleTimeoutSeconds"] = int64((d + time.Second - 1) / time.Second)
	}
	obj["spec"] = pgSpec
	return &unstructured.Unstructured{Object: obj}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
