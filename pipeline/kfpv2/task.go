package kfpv2

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// task converts one task of a dag into a step.
func (c *conv) task(key, n *yaml.Node, field string) *yaml.Node {
	step := c.mapping(key, field, c.str("name", key, field), c.str(key.Value, key, field))
	t := c.fieldsOf(n, field, "a task", []string{"componentRef", "inputs", "dependentTasks", "cachingOptions", "taskInfo", "retryPolicy", "triggerPolicy", "parameterIterator", "iteratorPolicy"}, map[string]string{
		"artifactIterator": " (dsl.ParallelFor over artifacts)",
	})
	if t["iteratorPolicy"] != nil {
		c.errorf(t["iteratorPolicy"], field+".iteratorPolicy", "iteratorPolicy without parameterIterator")
	}
	ref := c.fieldsOf(t["componentRef"], field+".componentRef", "a componentRef", []string{"name"}, nil)
	if t["componentRef"] == nil {
		c.errorf(key, field, "missing: componentRef")
		return nil
	}
	name, ok := c.scalarOf(ref["name"], field+".componentRef.name", "a component name")
	if !ok {
		return nil
	}
	comp := c.component(name, ref["name"], field+".componentRef.name")
	if comp == nil {
		return nil
	}
	c.add(step, "component", ref["name"], field+".componentRef", comp)
	var usedByResources map[string]bool
	if label := c.executorOf(name); label != "" {
		fields, used := c.withRuntimeResources(label, t["inputs"], field+".inputs")
		step.Content = append(step.Content, fields...)
		usedByResources = used
		if secrets := c.secrets(label); secrets != nil {
			step.Content = append(step.Content, c.str("secrets", secrets, ""), secrets)
		}
	}
	var inputs *yaml.Node
	if in := t["inputs"]; in != nil {
		inputs = c.stepInputs(key, t, field, name, usedByResources)
		c.add(step, "inputs", in, field+".inputs", inputs)
	}
	if tp := t["triggerPolicy"]; tp != nil {
		c.triggerPolicy(step, tp, t["inputs"], field+".triggerPolicy", inputs)
	}
	if d := t["dependentTasks"]; d != nil && !c.final {
		c.dependentTasks(step, d, field+".dependentTasks")
	}
	c.caching(step, key, t["cachingOptions"], comp, field+".cachingOptions")
	if rp := t["retryPolicy"]; rp != nil {
		c.retryPolicy(step, rp, field+".retryPolicy")
	}
	return step
}

// stepInputs converts the inputs of task key (its fields t, at field),
// which uses component name, into a step's inputs, leaving out those the
// executor's resources read (usedByResources: withRuntimeResources).
func (c *conv) stepInputs(key *yaml.Node, t map[string]*yaml.Node, field, name string, usedByResources map[string]bool) *yaml.Node {
	in := t["inputs"]
	// KFP's task name ({{$.pipeline_task_name}} in a constant) is
	// taskInfo.name.
	c.taskName = key.Value
	if tn, _, ok := yamlfile.Lookup(t["taskInfo"], "name"); ok && tn.Kind == yaml.ScalarNode {
		c.taskName = tn.Value
	}
	inputs := c.taskInputs(in, field+".inputs", name)
	c.taskName = ""
	// An input the executor's resources read is not the component's
	// (the step's resources have its value), nor are the inputs KFP's
	// SDK adds beside it, not declared either, whose constant is
	// that input's placeholder (cpu_limit:
	// "{{$.inputs.parameters['pipelinechannel--cpu_limit']}}").
	kept := inputs.Content[:0]
	for i := 0; i+1 < len(inputs.Content); i += 2 {
		k := inputs.Content[i].Value
		_, _, declared := yamlfile.Lookup(c.comps, name, "inputDefinitions", "parameters", k)
		copyOf := ""
		if v, _, ok := yamlfile.Lookup(in, "parameters", k, "runtimeValue", "constant"); ok && v.Kind == yaml.ScalarNode {
			if m := wholeInParamRE().FindStringSubmatch(v.Value); m != nil {
				copyOf = m[1]
			}
		}
		if !declared && (usedByResources[k] || usedByResources[copyOf]) {
			continue
		}
		kept = append(kept, inputs.Content[i], inputs.Content[i+1])
	}
	inputs.Content = kept
	return inputs
}

// triggerPolicy converts a task's triggerPolicy tp (at pf; in the task's
// inputs, inputs the step's) into the step's trigger or when, or makes the
// task a finally step (c.final).
func (c *conv) triggerPolicy(step, tp, in *yaml.Node, pf string, inputs *yaml.Node) {
	p := c.fieldsOf(tp, pf, "a triggerPolicy", []string{"condition", "strategy"}, nil)
	if st := p["strategy"]; st != nil {
		switch {
		case st.Value != "ALL_UPSTREAM_TASKS_COMPLETED":
			c.errorf(st, pf+".strategy", "unknown strategy %q (expected ALL_UPSTREAM_TASKS_COMPLETED)", st.Value)
		case !c.atRoot:
			c.errorf(st, pf+".strategy", "KFP strategy ALL_UPSTREAM_TASKS_COMPLETED (dsl.ExitHandler, ignore_upstream_failure) is supported on a task of the root DAG only (a finally step, or a step with trigger: completed when it reads an upstream task's output)")
		case p["condition"] != nil:
			c.errorf(p["condition"], pf+".condition", "a condition on a task that runs whatever its upstream tasks did is not supported")
		case readsTaskOutput(in):
			// KFP's ignore_upstream_failure(): the task runs once its
			// upstream tasks (dependentTasks: its after) ended, an
			// input from one that did not succeed taking its default.
			c.add(step, "trigger", st, pf+".strategy", c.str("completed", st, pf+".strategy")) // pipeline.TriggerCompleted
		default:
			// A finally step runs after every other step: its
			// dependentTasks are what it waited for.
			c.final = true
		}
	}
	if cond, ok := c.scalarOf(p["condition"], pf+".condition", "a condition"); ok {
		if when, err := condition(cond, inputs); err != nil {
			c.errorf(p["condition"], pf+".condition", "%v", err)
		} else {
			c.add(step, "when", p["condition"], pf+".condition", c.str(when, p["condition"], pf+".condition"))
		}
	}
}

// dependentTasks converts a task's dependentTasks d (at df) into the
// step's after: the steps each task became.
func (c *conv) dependentTasks(step, d *yaml.Node, df string) {
	after := c.seq(d, df)
	if d.Kind != yaml.SequenceNode {
		c.errorf(d, df, "expected a list of task names")
	}
	for j, e := range d.Content {
		if v, ok := c.scalarOf(e, fmt.Sprintf("%s[%d]", df, j), "a task name"); ok {
			for _, name := range c.stepsOf(v) {
				after.Content = append(after.Content, c.str(name, e, fmt.Sprintf("%s[%d]", df, j)))
			}
		}
	}
	c.add(step, "after", d, df, after)
}

// caching converts a task's cachingOptions co (at cf, nil when left out;
// key the task's) into the step's cache: false unless enableCache is true,
// and unset on a task whose component comp is a sub-DAG.
func (c *conv) caching(step, key, co, comp *yaml.Node, cf string) {
	// KFP reads a left-out enableCache as false.
	enable := false
	if co != nil {
		o := c.fieldsOf(co, cf, "cachingOptions", []string{"enableCache"}, map[string]string{"cacheKey": " (pipectl's cache key is the step's fingerprint)"})
		if e := o["enableCache"]; e != nil {
			if e.Value != "true" && e.Value != "false" {
				c.errorf(e, cf+".enableCache", "expected true or false")
			}
			enable = e.Value == "true"
		}
	}
	// A sub-DAG's task caches nothing itself: its tasks say what they cache.
	if k, _, _ := yamlfile.Lookup(comp, "kind"); !enable && k.Value != "Pipeline" {
		at := key
		if co != nil {
			at = co
		}
		c.add(step, "cache", at, cf, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false", Line: at.Line, Column: at.Column})
	}
}

// retryPolicy converts a task's retryPolicy rp (at rf) into the step's
// retries; a backoff is refused.
func (c *conv) retryPolicy(step, rp *yaml.Node, rf string) {
	r := c.fieldsOf(rp, rf, "a retryPolicy", []string{"maxRetryCount", "backoffDuration", "backoffFactor", "backoffMaxDuration"}, nil)
	if d := r["backoffDuration"]; d != nil && d.Value != "0s" && d.Value != "0" {
		c.errorf(d, rf+".backoffDuration", "a retry backoff is not supported yet (pipectl retries at once): expected 0s, got %q", d.Value)
	}
	if m := r["maxRetryCount"]; m != nil {
		c.at(m, rf+".maxRetryCount")
		c.add(step, "retries", m, rf+".maxRetryCount", m)
	}
}

// readsTaskOutput reports whether a task's inputs (in) read a task's
// output parameter or artifact.
func readsTaskOutput(in *yaml.Node) bool {
	for _, kind := range []string{"parameters", "artifacts"} {
		m, _, _ := yamlfile.Lookup(in, kind)
		_, values := yamlfile.Pairs(m)
		for _, v := range values {
			for _, key := range []string{"taskOutputParameter", "taskOutputArtifact"} {
				if _, _, ok := yamlfile.Lookup(v, key); ok {
					return true
				}
			}
		}
	}
	return false
}
