package argo

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// podSpecPatch is the pod spec patch of a step's template that sets the
// resources given at run time (plan.Wiring.Resources), "" when there are
// none. Argo evaluates it when it creates the pod: each value, a workflow
// parameter or the template's upstream input, is set (as requests and
// equal limits) only when it is one pipeline.CheckRuntimeResource accepts,
// tested with the same patterns; otherwise it is left out (null) and exec,
// which checks the same values before the program starts, fails the step
// naming it. So no text of a value reaches the patch unless it is a
// quantity, a number or a resource name. With GPUs given at run time, the
// patch also gives the pod's tolerations: those written and, when GPUs
// are requested and none of them tolerates the GPU resource, its
// NoSchedule toleration (as plan does for GPUs written in the file).
//
// For resources: {cpu: "{{params.cpu}}"} the patch is
//
//	{"containers":[{"name":"main","resources":{"limits":{{=toJson(sprig.dict('cpu', (workflow.parameters['cpu'] matches '…') ? workflow.parameters['cpu'] : nil))}},"requests":…}}]}
func podSpecPatch(sp *plan.Step) (string, error) {
	res := sp.Wiring.Resources
	if len(res) == 0 {
		return "", nil
	}
	operand := func(f string) (string, error) {
		t := res[f]
		if len(t) != 1 {
			return "", fmt.Errorf("resources.%s: expected one part, got %d", f, len(t))
		}
		switch p := t[0]; {
		case p.Param != "":
			return "workflow.parameters['" + p.Param + "']", nil
		case p.Upstream != "":
			return "inputs.parameters['" + UpstreamInputPrefix + p.Upstream + "']", nil
		case pipeline.CheckResource(f, p.Lit) == nil && !strings.ContainsAny(p.Lit, `'\`):
			return "'" + p.Lit + "'", nil
		default:
			return "", fmt.Errorf("resources.%s: %q is not a value pipectl gives at run time", f, p.Lit)
		}
	}
	var dict []string
	for _, f := range []string{pipeline.ResourceCPU, pipeline.ResourceMemory} {
		if _, ok := res[f]; !ok {
			continue
		}
		v, err := operand(f)
		if err != nil {
			return "", err
		}
		dict = append(dict, fmt.Sprintf("'%s', (%s matches '%s') ? %s : nil", f, v, pipeline.QuantityPattern, v))
	}
	tolerations := ""
	_, gpu := res[pipeline.ResourceGPU]
	_, gpuName := res[pipeline.ResourceGPUResource]
	if gpu || gpuName {
		n, g := "''", "''"
		var err error
		if gpu {
			if n, err = operand(pipeline.ResourceGPU); err != nil {
				return "", err
			}
		}
		if gpuName {
			if g, err = operand(pipeline.ResourceGPUResource); err != nil {
				return "", err
			}
		}
		nameOK := fmt.Sprintf("(%s == '' || len(%s) <= %d && %s matches '%s' && not (%s matches '%s'))",
			g, g, pipeline.MaxGPUResourceLen, g, pipeline.GPUResourcePattern, g, pipeline.KubePattern)
		countOK := fmt.Sprintf("(%s matches '%s' && int(%s) > 0 && int(%s) <= %d)", n, pipeline.GPUsPattern, n, n, pipeline.MaxGPUs)
		name := fmt.Sprintf("(%s && %s != '' ? %s : '%s')", nameOK, g, g, plan.DefaultGPUResource)
		dict = append(dict, fmt.Sprintf("%s, %s && %s ? %s : nil", name, nameOK, countOK, n))
		written, covering := staticTolerations(sp.Pod.Tolerations)
		if covering != nil {
			gpuTol := fmt.Sprintf("{'key': %s, 'operator': 'Exists', 'effect': 'NoSchedule'}", name)
			cond := nameOK + " && " + countOK
			if len(covering) > 0 {
				cond += fmt.Sprintf(" && not (%s in [%s])", name, strings.Join(covering, ", "))
			}
			with := "[" + strings.Join(append(slices.Clone(written), gpuTol), ", ") + "]"
			tolerations = fmt.Sprintf(`,"tolerations":{{=toJson(%s ? %s : [%s])}}`, cond, with, strings.Join(written, ", "))
		}
	}
	list := "{{=toJson(sprig.dict(" + strings.Join(dict, ", ") + "))}}"
	return `{"containers":[{"name":"main","resources":{"limits":` + list + `,"requests":` + list + `}}]` + tolerations + `}`, nil
}

// staticTolerations are the pod's tolerations written in the file as expr
// map literals, and the quoted keys of those that tolerate a GPU
// resource's NoSchedule taint whatever its value; covering is nil when one
// tolerates every key (no GPU toleration is then needed).
func staticTolerations(ts []corev1.Toleration) (written, covering []string) {
	covering = []string{}
	for _, t := range ts {
		var kv []string
		for _, f := range [][2]string{{"key", t.Key}, {"operator", string(t.Operator)}, {"value", t.Value}, {"effect", string(t.Effect)}} {
			if f[1] != "" {
				kv = append(kv, fmt.Sprintf("'%s': '%s'", f[0], f[1]))
			}
		}
		written = append(written, "{"+strings.Join(kv, ", ")+"}")
		if t.Operator == corev1.TolerationOpExists && (t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule) {
			if t.Key == "" {
				covering = nil
			} else if covering != nil {
				covering = append(covering, "'"+t.Key+"'")
			}
		}
	}
	return written, covering
}
