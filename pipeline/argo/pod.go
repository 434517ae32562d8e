package argo

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline"
)

// podShape is how a step's pod is sized and placed.
type podShape struct {
	Resources    corev1.ResourceRequirements `json:"resources"`
	NodeSelector map[string]string           `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration         `json:"tolerations,omitempty"`
}

func podShapeOf(r *pipeline.Resources, nodeSelector map[string]string, tolerations []pipeline.Toleration) (*podShape, error) {
	res, gpu, err := resources(r)
	if err != nil {
		return nil, err
	}
	if err := checkLabelMap("nodeSelector", nodeSelector); err != nil {
		return nil, err
	}
	tols, err := tolerationsOf(tolerations, gpu)
	if err != nil {
		return nil, err
	}
	return &podShape{Resources: res, NodeSelector: nodeSelector, Tolerations: tols}, nil
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
	if r.GPU < 0 {
		errs = append(errs, fmt.Errorf("resources.gpu: expected 0 or more, got %d", r.GPU))
	}
	if r.GPU > 0 {
		gpu = r.GPUResource
		if gpu == "" {
			gpu = DefaultGPUResource
		}
		add("gpu", gpu, fmt.Sprint(r.GPU))
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

// imageProblem describes what is wrong with an image reference, or "".
func imageProblem(image string) string {
	switch {
	case strings.ContainsAny(image, " \t\n{}$"):
		return "an image reference has no spaces, braces or $"
	}
	return ""
}

// LaunchSpec is what `pipectl launch` gets as --distributed; the launcher
// owns its definition.
type LaunchSpec = launcher.LaunchSpec

// Gang selects how all ranks are admitted together.
type Gang = launcher.GangSpec

// DecodeLaunchSpec reads the --distributed flag of `pipectl launch`.
func DecodeLaunchSpec(s string) (*LaunchSpec, error) { return launcher.DecodeLaunchSpec(s) }

func (c *compiler) launchSpec(s *pipeline.Step) (*LaunchSpec, error) {
	d := s.Distributed
	r := d.Resources
	if r == nil {
		r = s.Resources
	}
	nodeSelector := d.NodeSelector
	if nodeSelector == nil {
		nodeSelector = s.NodeSelector
	}
	tols := d.Tolerations
	if tols == nil {
		tols = s.Tolerations
	}
	shape, err := podShapeOf(r, nodeSelector, tols)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	ls := &LaunchSpec{
		Version: components.ExecSpecVersion, Pipeline: c.p.Metadata.Name, Image: s.Resolved.Image, PipectlImage: c.opts.Image,
		Nodes: d.Nodes, ProcsPerNode: d.Procs(), MaxRestarts: d.MaxRestarts, Port: d.Port,
		Resources: shape.Resources, NodeSelector: shape.NodeSelector, Tolerations: shape.Tolerations,
		PriorityClassName: d.PriorityClass, ServiceAccountName: c.opts.ServiceAccount, Env: c.storeEnv(),
	}
	if r != nil && r.GPU > 0 {
		ls.GPUResource = r.GPUResource
		if ls.GPUResource == "" {
			ls.GPUResource = DefaultGPUResource
		}
	}
	if d.StartupTimeout.Duration > 0 {
		ls.StartupTimeout = d.StartupTimeout.String()
	}
	if s.Timeout.Duration > 0 {
		ls.Timeout = s.Timeout.String()
	}
	if d.Affinity.Kind != 0 {
		var v any
		if err := d.Affinity.Decode(&v); err != nil {
			return nil, fmt.Errorf("distributed.affinity: %v", err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("distributed.affinity: %v", err)
		}
		var a corev1.Affinity
		if err := yaml.UnmarshalStrict(b, &a); err != nil {
			return nil, fmt.Errorf("distributed.affinity: not a Kubernetes affinity: %v", err)
		}
		ls.Affinity = &a
	}
	if g := d.Gang; g != nil {
		ls.Gang = &Gang{}
		if g.Kueue != nil {
			ls.Gang.KueueQueue = g.Kueue.Queue
		}
		if g.PodGroup != nil {
			ls.Gang.PodGroupScheduler = g.PodGroup.Scheduler
			if g.PodGroup.Timeout.Duration > 0 {
				ls.Gang.PodGroupTimeout = g.PodGroup.Timeout.String()
			}
		}
	}
	return ls, nil
}
