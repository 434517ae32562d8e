package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/kfpv2"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// LoadOptions tune how a pipeline file is loaded.
type LoadOptions struct {
	// Runtimes are the Kubeflow Trainer runtimes a step may name
	// (distributed.runtime) besides those its pipeline lists (runtimes:,
	// which win over these).
	Runtimes *trainer.Set
}

// LoadWith is Load with opts.
func LoadWith(path string, opts LoadOptions) (*Pipeline, error) {
	data, err := yamlfile.ReadBytes(path)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, data, opts)
}

// ParseWith is Parse with opts: the file may also be a Kubeflow Trainer
// TrainJob (see ParseTrainJob).
func ParseWith(path string, data []byte, opts LoadOptions) (*Pipeline, error) {
	if trainer.IsTrainJobFile(data) {
		return ParseTrainJob(path, data, opts)
	}
	if kfpv2.Is(data) {
		return parseKFPv2(path, data)
	}
	f, err := yamlfile.Parse(path, data)
	if err != nil {
		return nil, err
	}
	return decodeIn(f, nil, nil, opts.Runtimes)
}

// runtimeSet is the runtimes the steps of the file being loaded may name:
// the pipeline's runtimes: files (relative to it) over those it inherits.
func (v *validator) runtimeSet() *trainer.Set {
	base := v.runtimes
	if len(v.p.Runtimes) == 0 {
		return base
	}
	dir := filepath.Dir(v.f.Path)
	paths := make([]string, len(v.p.Runtimes))
	for j, r := range v.p.Runtimes {
		paths[j] = filepath.Join(dir, r)
		if filepath.IsAbs(r) {
			paths[j] = r
		}
	}
	own, err := trainer.ReadRuntimes(paths)
	if err != nil {
		v.at(p("runtimes"), "cannot load the runtimes listed")
		v.errs = append(v.errs, yamlfile.Split(err)...)
	}
	return base.Merge(own)
}

// applyRuntimes gives each distributed step that names a runtime
// (distributed.runtime) what the runtime sets and the step does not:
// framework, nodes, procsPerNode, image, env, resources, nodeSelector,
// tolerations, affinity, priorityClass and the pod group. The step's own
// fields win; maps (nodeSelector) and env merge, the step's entries winning.
func (v *validator) applyRuntimes() {
	set := v.runtimeSet()
	v.chain[len(v.chain)-1].runtimes = set // the pipelines its steps use inherit them
	for i := range v.p.Steps {
		d := v.p.Steps[i].Distributed
		if d == nil || d.Runtime == "" {
			continue
		}
		r, err := set.Lookup("", d.Runtime)
		if err != nil {
			v.atValue(v.sp(i, "distributed", "runtime"), "%v", err)
			continue
		}
		if len(r.Refused) > 0 {
			v.atValue(v.sp(i, "distributed", "runtime"), "runtime %q (%s:%d) holds fields pipectl cannot honour, below", r.Name, r.File, r.Line)
			v.errs = append(v.errs, r.Refused...)
			continue
		}
		v.applyRuntime(i, r)
	}
}

// applyRuntime applies runtime r to steps[i].
func (v *validator) applyRuntime(i int, r *trainer.Runtime) {
	s := &v.p.Steps[i]
	d := s.Distributed
	v.addWarnings(r.Warnings)
	switch {
	case d.Framework == "":
		d.Framework = r.Framework
	case r.Framework != "" && d.Framework != r.Framework:
		v.atValue(v.sp(i, "distributed", "framework"), "framework %s contradicts runtime %q, whose mlPolicy is %s (%s:%d): leave framework out, or name a %s runtime",
			d.Framework, r.Name, r.Framework, r.File, r.Line, d.Framework)
	}
	if d.Nodes == 0 {
		d.Nodes = max(r.NumNodes, 1)
	}
	if r.Pod.Command != nil {
		v.runtimeCommands = append(v.runtimeCommands, runtimeCommand{i, r})
	}
	if d.ProcsPerNode == 0 {
		d.ProcsPerNode = r.ProcsPerNode
	}
	if s.Image == "" {
		s.Image = r.Pod.Image
	}
	s.Env = envOf(trainer.MergeEnv(r.Pod.Env, podEnv(s.Env)))
	if d.Resources == nil && s.Resources == nil && (r.Pod.Requests != nil || r.Pod.Limits != nil) {
		res, err := ResourcesOf(r.Pod.Requests, r.Pod.Limits, func(w string) {
			v.p.Warnings = append(v.p.Warnings, fmt.Sprintf("%s: runtime %s: %s", r.File, r.Name, w))
		})
		if err != nil {
			v.atValue(v.sp(i, "distributed", "runtime"), "runtime %q (%s:%d): %v", r.Name, r.File, r.Line, err)
		}
		d.Resources = res
	}
	if r.Pod.NodeSelector != nil {
		own := d.NodeSelector
		if own == nil {
			own = s.NodeSelector
		}
		d.NodeSelector = trainer.Overlay(trainer.Pod{NodeSelector: r.Pod.NodeSelector}, trainer.Pod{NodeSelector: own}).NodeSelector
	}
	if d.Tolerations == nil && s.Tolerations == nil && r.Pod.Tolerations != nil {
		for _, t := range r.Pod.Tolerations {
			d.Tolerations = append(d.Tolerations, Toleration(t))
		}
	}
	if d.Affinity.Kind == 0 && r.Pod.Affinity != nil {
		d.Affinity = *r.Pod.Affinity
	}
	if d.PriorityClass == "" {
		d.PriorityClass = r.Pod.PriorityClass
	}
	if d.Gang == nil && r.PodGroup != "" {
		d.Gang = &Gang{PodGroup: &PodGroupGang{Scheduler: r.PodGroup}}
		d.Gang.PodGroup.Timeout.Duration = secondsDuration(r.PodGroupTimeout)
	}
}

func podEnv(env []components.EnvVar) []trainer.EnvVar {
	out := make([]trainer.EnvVar, len(env))
	for j, e := range env {
		out[j] = trainer.EnvVar{Name: e.Name, Value: e.Value}
	}
	return out
}

func envOf(env []trainer.EnvVar) []components.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]components.EnvVar, len(env))
	for j, e := range env {
		out[j] = components.EnvVar{Name: e.Name, Value: e.Value}
	}
	return out
}

// ResourcesOf maps a pod's requests and limits (Kubernetes' names: cpu,
// memory, an extended resource such as nvidia.com/gpu) onto a step's
// resources, whose requests equal its limits: each resource takes its
// request, else its limit; warn hears of a limit that differs from its
// request. A resource name ending in /gpu gives the GPUs.
func ResourcesOf(requests, limits map[string]string, warn func(string)) (*Resources, error) {
	names := map[string]bool{}
	for k := range requests {
		names[k] = true
	}
	for k := range limits {
		names[k] = true
	}
	res := &Resources{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(names)) {
		val, ok := requests[name]
		if !ok {
			val = limits[name]
		} else if l, ok := limits[name]; ok && l != val {
			warn(fmt.Sprintf("%s: pipectl sizes a pod with requests equal to limits: using %s (the request; the limit %s is not used)", name, val, l))
		}
		switch {
		case name == "cpu":
			res.CPU = val
		case name == "memory":
			res.Memory = val
		case strings.HasSuffix(name, "/gpu"):
			res.GPU = val
			if name != defaultGPUResource {
				res.GPUResource = name
			}
		case strings.Contains(name, "/") && !kubeRE().MatchString(name):
			if res.Extra == nil {
				res.Extra = map[string]string{}
			}
			res.Extra[name] = val
		default:
			errs = append(errs, fmt.Errorf("resource %s is not supported by pipectl (expected cpu, memory, a GPU resource such as nvidia.com/gpu, or an extended resource DOMAIN/NAME)", name))
		}
	}
	return res, errors.Join(errs...)
}

// defaultGPUResource is the GPU resource a step's resources.gpu counts
// unless gpuResource names another.
const defaultGPUResource = "nvidia.com/gpu"

// secondsDuration is n seconds.
func secondsDuration(n int) time.Duration { return time.Duration(n) * time.Second }

// runtimeCommand is a step whose runtime has a command of its own.
type runtimeCommand struct {
	step    int
	runtime *trainer.Runtime
}

// runtimeCommandWarnings warns of each runtime command a step does not
// run (its component has its own); call once the components are resolved.
func (v *validator) runtimeCommandWarnings() {
	for _, rc := range v.runtimeCommands {
		s, r := &v.p.Steps[rc.step], rc.runtime
		if s.Resolved != nil && !slices.Equal(r.Pod.Command, s.Resolved.Command) {
			v.p.Warnings = append(v.p.Warnings, fmt.Sprintf("%s:%d: runtime %s: its command is not used: step %s runs its component's", r.File, r.Line, r.Name, s.Name))
		}
	}
}
