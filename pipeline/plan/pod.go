package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	k8syaml "sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// podOf sizes and places a pod: requests with equal limits, the node
// selector, and the tolerations with the GPU resource's NoSchedule
// toleration added when GPUs are requested and none tolerates it yet.
func podOf(r *pipeline.Resources, nodeSelector map[string]string, tolerations []pipeline.Toleration) (Pod, error) {
	res, gpu, err := resources(written(r))
	if err != nil {
		return Pod{}, err
	}
	if err := CheckLabels("nodeSelector", nodeSelector); err != nil {
		return Pod{}, err
	}
	tols, err := tolerationsOf(tolerations, gpu)
	if err != nil {
		return Pod{}, err
	}
	return Pod{Resources: res, NodeSelector: nodeSelector, Tolerations: tols}, nil
}

// CheckLabels checks the keys and values of a map of Kubernetes labels
// (labels, a nodeSelector); what names the map in the errors.
func CheckLabels(what string, m map[string]string) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s key %q: %s", what, k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(m[k]); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %s value %q: %s", what, k, m[k], strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// written is r without the fields given at run time (Runtime): both GPU
// fields when either is.
func written(r *pipeline.Resources) *pipeline.Resources {
	refs := r.Refs()
	if len(refs) == 0 {
		return r
	}
	c := *r
	for f := range refs {
		switch f {
		case pipeline.ResourceCPU:
			c.CPU = ""
		case pipeline.ResourceMemory:
			c.Memory = ""
		case pipeline.ResourceGPU, pipeline.ResourceGPUResource:
			c.GPU, c.GPUResource = "", ""
		}
	}
	return &c
}

// runtimeResources are the fields of r given at run time, as texts, by
// field: a param, or an upstream value (ResourceInputPrefix+FIELD, added to
// w.Upstream); with one GPU field given at run time, the other as written
// (a literal) or left out. Nil when there are none.
func runtimeResources(p *pipeline.Pipeline, r *pipeline.Resources, w *Wiring) (map[string]Text, error) {
	refs := r.Refs()
	if len(refs) == 0 {
		return nil, nil
	}
	out := map[string]Text{}
	for _, f := range pipeline.RuntimeFields {
		b, ok := refs[f]
		switch {
		case !ok && (f == pipeline.ResourceGPU || f == pipeline.ResourceGPUResource) && r.Field(f) != "":
			_, gpu := refs[pipeline.ResourceGPU]
			_, name := refs[pipeline.ResourceGPUResource]
			if gpu || name {
				out[f] = Text{{Lit: r.Field(f)}}
			}
		case !ok:
		case b.Param != "":
			if _, ok := p.Params[b.Param]; !ok {
				return nil, fmt.Errorf("resources.%s: unknown parameter %q", f, b.Param)
			}
			out[f] = Text{{Param: b.Param}}
		default:
			o, err := upstreamOutput(p, b.Step, b.Output)
			if err != nil {
				return nil, fmt.Errorf("resources.%s: %w", f, err)
			}
			if components.IsArtifact(o.Type) || p.Step(b.Step).Loop != nil {
				return nil, fmt.Errorf("resources.%s: output %q of step %s is not one value", f, b.Output, b.Step)
			}
			key := ResourceInputPrefix + f
			w.Upstream[key] = OutputRef{Step: b.Step, Output: b.Output}
			out[f] = Text{{Upstream: key}}
		}
	}
	return out, nil
}

// resources converts a step's resources to requests and equal limits. gpu is
// the GPU resource name when GPUs are requested.
func resources(r *pipeline.Resources) (req corev1.ResourceRequirements, gpu string, err error) {
	if r == nil {
		return req, "", nil
	}
	list := corev1.ResourceList{}
	var errs []error
	add := func(field, name, value string) {
		if value == "" {
			return
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			errs = append(errs, fmt.Errorf("resources.%s: %q is not a quantity (e.g. 500m, 2, 4Gi)", field, value))
			return
		}
		if msgs := validation.IsQualifiedName(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("resources.%s: %q is not a resource name: %s", field, name, strings.Join(msgs, "; ")))
			return
		}
		list[corev1.ResourceName(name)] = q
	}
	add("cpu", "cpu", r.CPU)
	add("memory", "memory", r.Memory)
	if n, err := strconv.Atoi(r.GPU); r.GPU != "" && (err != nil || n < 0) {
		errs = append(errs, fmt.Errorf("resources.gpu: expected 0 or more, got %q", r.GPU))
	} else if n > 0 {
		gpu = r.GPUResource
		if gpu == "" {
			gpu = DefaultGPUResource
		}
		add("gpu", gpu, strconv.Itoa(n))
	}
	for _, name := range slices.Sorted(maps.Keys(r.Extra)) {
		add("extra."+name, name, r.Extra[name])
	}
	if len(errs) > 0 {
		return req, "", errors.Join(errs...)
	}
	if len(list) > 0 {
		req.Requests, req.Limits = list, list.DeepCopy()
	}
	return req, gpu, nil
}

// tolerationsOf converts tolerations and, for a GPU pod, adds the
// NoSchedule toleration of the GPU resource when none tolerates it yet.
func tolerationsOf(ts []pipeline.Toleration, gpu string) ([]corev1.Toleration, error) {
	var out []corev1.Toleration
	var errs []error
	covered := false
	for i, t := range ts {
		ct := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		switch ct.Operator {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			errs = append(errs, fmt.Errorf("tolerations[%d].operator: expected Equal or Exists, got %q", i, t.Operator))
		}
		switch ct.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, fmt.Errorf("tolerations[%d].effect: expected NoSchedule, PreferNoSchedule or NoExecute, got %q", i, t.Effect))
		}
		if t.Key != "" {
			if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("tolerations[%d].key %q: %s", i, t.Key, strings.Join(msgs, "; ")))
			}
		}
		if t.Value != "" {
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("tolerations[%d].value %q: %s", i, t.Value, strings.Join(msgs, "; ")))
			}
		}
		if (ct.Key == gpu || ct.Key == "") && ct.Operator == corev1.TolerationOpExists && (ct.Effect == "" || ct.Effect == corev1.TaintEffectNoSchedule) {
			covered = true
		}
		out = append(out, ct)
	}
	if gpu != "" && !covered {
		out = append(out, corev1.Toleration{Key: gpu, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return out, errors.Join(errs...)
}

// affinityOf converts a step's distributed.affinity to a Kubernetes affinity.
func affinityOf(n *yaml.Node) (*corev1.Affinity, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("distributed.affinity: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("distributed.affinity: %v", err)
	}
	var a corev1.Affinity
	if err := k8syaml.UnmarshalStrict(b, &a); err != nil {
		return nil, fmt.Errorf("distributed.affinity: not a Kubernetes affinity: %v", err)
	}
	return &a, nil
}

// shmSize is the size limit of a rank pod's /dev/shm: the one written,
// else half the rank's memory limit, else "" (unbounded).
func shmSize(written string, res corev1.ResourceRequirements) (string, error) {
	if written != "" {
		q, err := resource.ParseQuantity(written)
		if err != nil || q.Sign() <= 0 {
			return "", fmt.Errorf("distributed.shmSize: %q is not a positive quantity (e.g. 8Gi)", written)
		}
		return q.String(), nil
	}
	mem, ok := res.Limits[corev1.ResourceMemory]
	if !ok || mem.Sign() <= 0 {
		return "", nil
	}
	half := resource.NewQuantity(mem.Value()/2, resource.BinarySI)
	return half.String(), nil
}

// gpus is the number of GPUs r requests per pod.
func gpus(r *pipeline.Resources) int {
	return r.GPUs()
}
