package kfpv2

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// What the steps running an executor get from the executor's container
// resources and its kubernetes platform spec, where pipectl has the field:
//
//	resources.resourceCpuLimit (else cpuLimit, else the requests)   resources.cpu
//	resources.resourceMemoryLimit (else memoryLimit in GB, else the requests)
//	                                                                resources.memory
//	resources.accelerator.resourceCount/resourceType (count/type)   resources.gpu, resources.gpuResource
//	platforms.kubernetes...tolerations (key, operator, value, effect)  tolerations
//	platforms.kubernetes...nodeSelector.labels                      nodeSelector
//	platforms.kubernetes...secretAsEnv (keyToEnv, secretName or
//	secretNameParameter: a constant or an input, optional)          secrets
//	platforms.kubernetes...podMetadata (labels, annotations)         podMetadata
//	platforms.kubernetes...fieldPathAsEnv (a label or annotation)   env
//
// pipectl's resources are requests with equal limits. A value given at run
// time (a placeholder, nodeSelectorJson, tolerationJson) is an error.

// stepFields are the step fields of the steps running each executor, by
// executor label: keys and values to add to the step.
type stepFields map[string][]*yaml.Node

// resources converts a container's resources (n, at field) into the
// resources of the steps running executor label.
func (c *conv) resources(label string, n *yaml.Node, field string) {
	r := c.fieldsOf(n, field, "container resources", []string{"cpuLimit", "memoryLimit", "cpuRequest", "memoryRequest",
		"resourceCpuLimit", "resourceMemoryLimit", "resourceCpuRequest", "resourceMemoryRequest", "accelerator"}, nil)
	out := c.mapping(n, field)
	first := func(keys ...string) (*yaml.Node, string) {
		for _, k := range keys {
			if v := r[k]; v != nil {
				return v, field + "." + k
			}
		}
		return nil, ""
	}
	// static reports whether v is written in the file; a whole
	// {{$.inputs.parameters['NAME']}} is a task input, given at run time:
	// recorded for the tasks running the executor (runtimeResources).
	static := func(v *yaml.Node, f, field string) bool {
		if v.Kind == yaml.ScalarNode && !strings.Contains(v.Value, "{{") {
			return true
		}
		if m := wholeInParamRE().FindStringSubmatch(v.Value); v.Kind == yaml.ScalarNode && m != nil {
			if c.runtimeRes == nil {
				c.runtimeRes = map[string][]runtimeResource{}
			}
			c.at(v, f)
			c.runtimeRes[label] = append(c.runtimeRes[label], runtimeResource{field: field, input: m[1], n: v, at: f})
			return false
		}
		c.errorf(v, f, "expected a value or a whole {{$.inputs.parameters['NAME']}} (a resource given at run time)")
		return false
	}
	if v, f := first("resourceCpuLimit", "cpuLimit", "resourceCpuRequest", "cpuRequest"); v != nil && static(v, f, "cpu") {
		c.add(out, "cpu", v, f, c.str(v.Value, v, f))
	}
	if v, f := first("resourceMemoryLimit", "resourceMemoryRequest"); v != nil && static(v, f, "memory") {
		c.add(out, "memory", v, f, c.str(v.Value, v, f))
	} else if v, f := first("memoryLimit", "memoryRequest"); v != nil && static(v, f, "memory") {
		c.add(out, "memory", v, f, c.str(v.Value+"G", v, f))
	}
	if a := r["accelerator"]; a != nil {
		af := field + ".accelerator"
		acc := c.fieldsOf(a, af, "an accelerator", []string{"count", "type", "resourceCount", "resourceType"}, nil)
		cnt, cf := acc["resourceCount"], af+".resourceCount"
		if cnt == nil {
			cnt, cf = acc["count"], af+".count"
		}
		typ, tf := acc["resourceType"], af+".resourceType"
		if typ == nil {
			typ, tf = acc["type"], af+".type"
		}
		if cnt != nil && static(cnt, cf, "gpu") {
			if k, err := strconv.Atoi(cnt.Value); err != nil || k < 0 {
				c.errorf(cnt, cf, "expected a number of accelerators, got %q", cnt.Value)
			} else {
				c.add(out, "gpu", cnt, cf, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(k), Line: cnt.Line, Column: cnt.Column})
			}
		}
		if typ != nil && static(typ, tf, "gpuResource") && typ.Value != "nvidia.com/gpu" {
			c.add(out, "gpuResource", typ, tf, c.str(typ.Value, typ, tf))
		}
	}
	if len(out.Content) > 0 || len(c.runtimeRes[label]) > 0 {
		c.extra[label] = append(c.extra[label], c.str("resources", n, field), out)
	}
}

// wholeInParamRE is a whole {{$.inputs.parameters['NAME']}}.
var wholeInParamRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}$`) })

// runtimeResource is a container resource given at run time: pipectl's
// resources field, the task input that gives it, its node and KFP field.
type runtimeResource struct {
	field, input string
	n            *yaml.Node
	at           string
}

// withRuntimeResources returns the step fields of executor label for a
// task whose inputs are in (the KFP task's inputs, at field): its
// resources with those given at run time added, each the value of the
// task's input: a pipeline input or a dag's (its param), a task's output,
// or a constant. used are the inputs read so.
func (c *conv) withRuntimeResources(label string, in *yaml.Node, field string) (fields []*yaml.Node, used map[string]bool) {
	fields = c.extra[label]
	rs := c.runtimeRes[label]
	if len(rs) == 0 {
		return fields, nil
	}
	fields = slices.Clone(fields)
	var res *yaml.Node
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i].Value == "resources" {
			res = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: fields[i+1].Line, Column: fields[i+1].Column, Content: slices.Clone(fields[i+1].Content)}
			fields[i+1] = res
		}
	}
	used = map[string]bool{}
	for _, r := range rs {
		v, ok := c.taskInputValue(in, field, r.input)
		if !ok {
			c.errorf(r.n, r.at, "the task (%s) has no input parameter %q given by a pipeline input, a task output or a constant", field, r.input)
			continue
		}
		if strings.Contains(v, "{{") && !wholeRefRE().MatchString(v) {
			c.errorf(r.n, r.at, "input %q of the task is %s: a resource given at run time is a pipeline input, a task's output or a constant", r.input, v)
			continue
		}
		used[r.input] = true
		c.add(res, r.field, r.n, r.at, c.str(v, r.n, r.at))
	}
	return fields, used
}

// taskInputValue is the value of a KFP task's input parameter name (the
// task's inputs in, at field) as pipectl writes it: a constant as written,
// or the reference to a pipeline input, a dag's input or a task's output.
func (c *conv) taskInputValue(in *yaml.Node, field, name string) (string, bool) {
	p, _, ok := yamlfile.Lookup(in, "parameters", name)
	if !ok {
		return "", false
	}
	f := field + ".parameters." + name
	if v, _, ok := yamlfile.Lookup(p, "componentInputParameter"); ok && v.Kind == yaml.ScalarNode {
		ref, err := c.scoped(v.Value, nil)
		if err != nil {
			c.errorf(v, f+".componentInputParameter", "%v", err)
			return "", false
		}
		return ref, true
	}
	if v, _, ok := yamlfile.Lookup(p, "taskOutputParameter"); ok {
		return c.taskOutputParameter(v, f+".taskOutputParameter")
	}
	if v, _, ok := yamlfile.Lookup(p, "runtimeValue", "constant"); ok && v.Kind == yaml.ScalarNode && !components.IsNull(v) {
		return v.Value, true
	}
	return "", false
}

// wholeRefRE is a whole reference to a param or a step's output.
var wholeRefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{(params\.[^{}]+|steps\.[^{}]+\.outputs\.[^{}]+)\}\}$`)
})
