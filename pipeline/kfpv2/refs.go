package kfpv2

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

var selectorRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^parseJson\(string_value\)\["([A-Za-z_][A-Za-z0-9_]*)"\]$`)
})

// scoped is the reference of input name of the dag being converted, with
// a selector of a field of a loop item.
func (c *conv) scoped(name string, selector *yaml.Node) (string, error) {
	if len(c.loops) == 0 {
		if selector != nil {
			return "", fmt.Errorf("KFP parameterExpressionSelector is supported on a loop item only (a field of a ParallelFor item)")
		}
		return "{{params." + name + "}}", nil
	}
	d := len(c.loops) - 1
	lv := c.loops[d]
	v, ok := lv.scope[name]
	if name == lv.item {
		v, ok = itemMarker+strconv.Itoa(d)+"}}", true
	}
	if !ok {
		return "", fmt.Errorf("the ParallelFor body has no input %q given by its task", name)
	}
	if selector == nil {
		return v, nil
	}
	if !strings.HasPrefix(v, itemMarker) {
		return "", fmt.Errorf("KFP parameterExpressionSelector is supported on a loop item only (a field of a ParallelFor item)")
	}
	m := selectorRE().FindStringSubmatch(selector.Value)
	if m == nil {
		return "", fmt.Errorf("parameterExpressionSelector %q is not supported (supported: parseJson(string_value)[\"FIELD\"], a field of the loop item)", selector.Value)
	}
	return strings.TrimSuffix(v, "}}") + "." + m[1] + "}}", nil
}

// notInBody reports whether a task output may be read: not inside a
// ParallelFor body (where the producer is a task of the body), else it
// reports the error at at.
func (c *conv) notInBody(task string, at *yaml.Node, field string) bool {
	if len(c.loops) == 0 {
		return true
	}
	c.errorf(at, field, "the output of task %q of the same ParallelFor body is not supported yet: pipectl runs each task of a ParallelFor body as a loop of its own, so an iteration of one cannot read the same iteration of another", task)
	return false
}

// outputRef is the reference to output key of task of the dag being
// converted: for a ParallelFor, the body task's output its dag.outputs
// name (dsl.Collected), which its loop step collects into a JSON list.
func (c *conv) outputRef(task, key string, at *yaml.Node, field string) (string, bool) {
	return c.ref(task, key, false, at, field)
}

// artifactRef is the reference to output artifact key of task of the dag
// being converted: for a ParallelFor, the body task's output artifact its
// dag.outputs.artifacts name (dsl.Collected), which its loop step collects
// into a directory of the iterations' artifacts (KFP's List[Artifact]).
func (c *conv) artifactRef(task, key string, at *yaml.Node, field string) (string, bool) {
	return c.ref(task, key, true, at, field)
}

// ref is outputRef (artifact false) or artifactRef.
func (c *conv) ref(task, key string, artifact bool, at *yaml.Node, field string) (string, bool) {
	if !c.notInBody(task, at, field) {
		return "", false
	}
	t, _, ok := yamlfile.Lookup(c.dagTasks, task)
	if ri, mapped := c.importOf(task, t); ok && mapped {
		return c.importRef(ri, task, key, artifact, at, field)
	}
	if !ok || !isLoop(t) {
		return "{{steps." + task + ".outputs." + key + "}}", true
	}
	// The body task and its output the body's dag.outputs name; a
	// ParallelFor in the body names one of its own body's tasks in turn.
	// KFP's driver collects the iterations of nested ParallelFors into one
	// list, outer iteration first (CollectInputs), as pipectl collects the
	// iterations of the loop over their product.
	body, path := bodyOf(t), []string{}
	for {
		sub, out, selField, ok := c.collectedSelector(task, body, key, artifact, at, field)
		if !ok {
			return "", false
		}
		if tasks, _, _ := yamlfile.Lookup(c.comps, body, "dag", "tasks"); (len(path) > 0 || len(c.loops) == 0) && c.pipelineBody(tasks) {
			// The loop step's pipeline declares the output (its
			// dag.outputs); pipectl collects it from the iterations.
			return "{{steps." + strings.Join(append([]string{task}, path...), "-") + ".outputs." + key + "}}", true
		}
		st, _, found := yamlfile.Lookup(c.comps, body, "dag", "tasks", sub.Value)
		switch {
		case !found:
			c.errorf(sub, selField+".producerSubtask", "unknown task %q of the ParallelFor body", sub.Value)
			return "", false
		case isLoop(st):
			path, body, key = append(path, sub.Value), bodyOf(st), out.Value
			continue
		case c.isDAG(bodyOf(st)):
			what := "outputs"
			if artifact {
				what = "artifacts"
			}
			c.errorf(at, field, "the collected %s of sub-DAG task %q of ParallelFor %q are not supported yet", what, sub.Value, task)
			return "", false
		}
		if len(path) == 0 {
			names, _ := c.bodyNames(task, t, "")
			return "{{steps." + names[sub.Value][0] + ".outputs." + out.Value + "}}", true
		}
		// The steps of a nested ParallelFor's body: LOOP-INNER-TASK.
		name := task + "-" + strings.Join(path, "-") + "-" + sub.Value
		if names, _ := c.bodyNames(task, t, ""); !slices.Contains(names[path[0]], name) {
			c.errorf(at, field, "the collected output of ParallelFor %q: no step %q", task, name)
			return "", false
		}
		return "{{steps." + name + ".outputs." + out.Value + "}}", true
	}
}

// collectedSelector returns the producer task (sub) and its output key
// (out) that the dag.outputs of ParallelFor body body give for output key
// of ParallelFor task, and the selector's field; it reports at at what is
// missing.
func (c *conv) collectedSelector(task, body, key string, artifact bool, at *yaml.Node, field string) (sub, out *yaml.Node, selField string, ok bool) {
	selField, outKey := "components."+body+".dag.outputs.parameters."+key+".valueFromParameter", "outputParameterKey"
	missing := fmt.Sprintf("the ParallelFor %q has no output parameter %q (components.%s.dag.outputs.parameters)", task, key, body)
	sel, _, found := yamlfile.Lookup(c.comps, body, "dag", "outputs", "parameters", key, "valueFromParameter")
	if !found {
		sel = nil
	}
	if artifact {
		selField, outKey = "components."+body+".dag.outputs.artifacts."+key+".artifactSelectors[0]", "outputArtifactKey"
		missing = fmt.Sprintf("the ParallelFor %q has no output artifact %q with one artifactSelector (components.%s.dag.outputs.artifacts)", task, key, body)
		sels, _, _ := yamlfile.Lookup(c.comps, body, "dag", "outputs", "artifacts", key, "artifactSelectors")
		sel = nil
		if sels != nil && sels.Kind == yaml.SequenceNode && len(sels.Content) == 1 {
			sel = sels.Content[0]
		}
	}
	sub, _, _ = yamlfile.Lookup(sel, "producerSubtask")
	out, _, _ = yamlfile.Lookup(sel, outKey)
	if sel == nil || sub == nil || out == nil || sub.Kind != yaml.ScalarNode || out.Kind != yaml.ScalarNode {
		c.errorf(at, field, "%s", missing)
		return nil, nil, "", false
	}
	return sub, out, selField, true
}
