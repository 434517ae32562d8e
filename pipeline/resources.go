package pipeline

import (
	"fmt"
	"regexp"
	"strconv"
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
	quantityRE    = regexp.MustCompile(QuantityPattern)
	gpusRE        = regexp.MustCompile(GPUsPattern)
	gpuResourceRE = regexp.MustCompile(GPUResourcePattern)
	kubeRE        = regexp.MustCompile(KubePattern)
)

// CheckRuntimeResource checks value, the value of resources field f
// (ResourceCPU, ...) given at run time; "" leaves the field unset.
func CheckRuntimeResource(f, value string) error {
	if value == "" {
		return nil
	}
	switch f {
	case ResourceCPU, ResourceMemory:
		if !quantityRE.MatchString(value) {
			return fmt.Errorf("resources.%s: %q is not a quantity (such as 500m, 2, 1.5, 4Gi or 15G: digits, then an optional exponent e3, binary suffix Ki, Mi, Gi, Ti, Pi, Ei or decimal suffix n, u, m, k, M, G, T, P, E)", f, value)
		}
	case ResourceGPU:
		if n, err := strconv.Atoi(value); err != nil || !gpusRE.MatchString(value) || n > MaxGPUs {
			return fmt.Errorf("resources.gpu: %q is not a number of GPUs (0 to %d)", value, MaxGPUs)
		}
	case ResourceGPUResource:
		if len(value) > MaxGPUResourceLen || !gpuResourceRE.MatchString(value) || kubeRE.MatchString(value) {
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
