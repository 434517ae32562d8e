package pipeline

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
)

// What a resource given at run time (Resources.Refs) may be. Each set is
// one Kubernetes accepts (a value outside it is refused before the pod is
// sized by it), written as a regular expression so that a workflow can
// test a value with the same expression before it patches a pod with it.
const (
	// QuantityPattern is a CPU or memory quantity: digits with an optional
	// fraction, then an optional decimal exponent (e3), binary suffix
	// (Ki, Mi, Gi, Ti, Pi, Ei) or decimal suffix (n, u, m, k, M, G, T, P, E).
	QuantityPattern = `^([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]{1,2}|[KMGTPE]i|[numkMGTPE])?$`
	// GPUsPattern is a number of GPUs: at most MaxGPUs.
	GPUsPattern = `^[0-9]{1,4}$`
	// GPUResourcePattern is an extended resource name, DOMAIN/NAME, of at
	// most MaxGPUResourceLen characters, whose domain is not KubePattern's.
	GPUResourcePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// KubePattern is the domains of Kubernetes' own resources.
	KubePattern = `^([^/]*[.])?kubernetes[.]io/`
	// MaxGPUResourceLen bounds an extended resource name given at run
	// time, so that Kubernetes' requests.NAME is a qualified name too.
	MaxGPUResourceLen = 244
)

var (
	quantityRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(QuantityPattern) })
	gpusRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(GPUsPattern) })
	gpuResourceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(GPUResourcePattern) })
	kubeRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(KubePattern) })
)

// CheckRuntimeResource checks value, the value of resources field f
// (ResourceCPU, ...) given at run time; "" leaves the field unset.
func CheckRuntimeResource(f, value string) error {
	if value == "" {
		return nil
	}
	switch f {
	case ResourceCPU, ResourceMemory:
		if !quantityRE().MatchString(value) {
			return fmt.Errorf("resources.%s: %q is not a quantity (such as 500m, 2, 1.5, 4Gi or 15G: digits, then an optional exponent e3, binary suffix Ki, Mi, Gi, Ti, Pi, Ei or decimal suffix n, u, m, k, M, G, T, P, E)", f, value)
		}
	case ResourceGPU:
		if n, err := strconv.Atoi(value); err != nil || !gpusRE().MatchString(value) || n > MaxGPUs {
			return fmt.Errorf("resources.gpu: %q is not a number of GPUs (0 to %d)", value, MaxGPUs)
		}
	case ResourceGPUResource:
		if len(value) > MaxGPUResourceLen || !gpuResourceRE().MatchString(value) || kubeRE().MatchString(value) {
			return fmt.Errorf("resources.gpuResource: %q is not an extended resource name (DOMAIN/NAME such as nvidia.com/gpu, at most %d characters, outside kubernetes.io)", value, MaxGPUResourceLen)
		}
	default:
		return fmt.Errorf("resources.%s cannot be given at run time", f)
	}
	return nil
}

// CheckResource checks the value of resources field f once a nested
// pipeline's references are rewritten: a whole reference, or a value
// CheckRuntimeResource accepts.
func CheckResource(f, value string) error {
	b, refs, err := parseBinding(value)
	switch {
	case err != nil:
		return fmt.Errorf("resources.%s: %v", f, err)
	case b.IsRef():
		return nil
	case len(refs) > 0:
		return fmt.Errorf("resources.%s would be %q: expected a value, or a whole {{params.NAME}} or {{steps.STEP.outputs.NAME}}", f, value)
	}
	return CheckRuntimeResource(f, value)
}

// resources checks a resources block of steps[i]: quantities Kubernetes
// accepts, resource names that are qualified names, and a GPU count in
// bounds. Local runs do not use it, but a file that could not run on a
// cluster is refused here, where the error can point at the line. A field
// given at run time (a whole reference) is checked by resourceRef.
func (v *validator) resources(i int, path []any, r *Resources, index map[string]int) {
	if r == nil {
		return
	}
	refs := r.Refs()
	for _, f := range RuntimeFields {
		if b, ok := refs[f]; ok {
			v.resourceRef(i, append(slices.Clone(path), f), f, b, index)
		}
	}
	quantity := func(field []any, value string) {
		if _, err := resource.ParseQuantity(value); value != "" && err != nil {
			v.atValue(append(slices.Clone(path), field...), "expected a quantity such as 500m, 2 or 4Gi, got %q", value)
		}
	}
	name := func(field []any, value string) {
		if msgs := validation.IsQualifiedName(value); len(msgs) > 0 {
			v.atValue(append(slices.Clone(path), field...), "expected a resource name such as nvidia.com/gpu, got %q: %s", value, strings.Join(msgs, "; "))
		}
	}
	if _, ok := refs[ResourceCPU]; !ok {
		quantity(p("cpu"), r.CPU)
	}
	if _, ok := refs[ResourceMemory]; !ok {
		quantity(p("memory"), r.Memory)
	}
	if _, ok := refs[ResourceGPU]; !ok && r.GPU != "" {
		if n, err := strconv.Atoi(r.GPU); err != nil || !digitsRE().MatchString(r.GPU) || n > MaxGPUs {
			v.atValue(append(slices.Clone(path), "gpu"), "expected 0 to %d GPUs, got %q", MaxGPUs, r.GPU)
		}
	}
	if _, ok := refs[ResourceGPUResource]; !ok && r.GPUResource != "" {
		name(p("gpuResource"), r.GPUResource)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Extra)) {
		name(p("extra", k), k)
		quantity(p("extra", k), r.Extra[k])
	}
}

// digitsRE is a whole number as a resource count: decimal digits.
var digitsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) })

// resourceRef checks resources field f of steps[i] (at path), given at
// run time by b: a param or a step's output parameter of a type that can
// hold it (a quantity: string, int or float; a GPU count: int or string;
// a resource name: string), not collected from a loop, on a step that is
// not distributed (its launcher sizes the rank pods from the file).
func (v *validator) resourceRef(i int, path []any, f string, b Binding, index map[string]int) {
	if v.p.Steps[i].Distributed != nil {
		v.atValue(path, "a distributed step's resources are written in the file (its rank pods are sized when the launcher starts), not given at run time")
		return
	}
	types := []string{components.TypeString, components.TypeInt, components.TypeFloat}
	switch f {
	case ResourceGPU:
		types = []string{components.TypeInt, components.TypeString}
	case ResourceGPUResource:
		types = []string{components.TypeString}
	}
	what := map[string]string{ResourceCPU: "a quantity", ResourceMemory: "a quantity", ResourceGPU: "a number of GPUs", ResourceGPUResource: "a resource name"}[f]
	if b.Param != "" {
		switch prm, ok := v.p.Params[b.Param]; {
		case !ok:
			v.atValue(path, "unknown parameter %q (params: %s)", b.Param, v.paramNames())
		case !slices.Contains(types, prm.Type):
			v.atValue(path, "parameter %q is %s: resources.%s is %s (%s)", b.Param, prm.Type, f, what, strings.Join(types, ", "))
		}
		return
	}
	_, refs, _ := parseBinding(b.String())
	before := len(v.errs)
	v.checkRefs(path, refs, index, i)
	if len(v.errs) > before {
		return
	}
	switch out, ok := v.output(b.Step, b.Output); {
	case !ok:
	case v.loops(b.Step):
		v.atValue(path, "output %q of loop step %q is collected into a JSON list: resources.%s is one value", b.Output, b.Step, f)
	case !slices.Contains(types, out.Type):
		v.atValue(path, "output %q of step %q is %s: resources.%s is %s (%s)", b.Output, b.Step, out.Type, f, what, strings.Join(types, ", "))
	}
}

// tolerations checks the operator and effect of each toleration, as
// Kubernetes would when the pod is created.
func (v *validator) tolerations(path []any, ts []Toleration) {
	for j, t := range ts {
		if t.Operator != "" && !slices.Contains(TolerationOperators, t.Operator) {
			v.atValue(append(slices.Clone(path), j, "operator"), "expected %s, got %q", orList(TolerationOperators), t.Operator)
		}
		if t.Effect != "" && !slices.Contains(TolerationEffects, t.Effect) {
			v.atValue(append(slices.Clone(path), j, "effect"), "expected %s, got %q", orList(TolerationEffects), t.Effect)
		}
	}
}
