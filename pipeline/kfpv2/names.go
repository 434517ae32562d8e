package kfpv2

import (
	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// isLoop reports whether task node t has a parameterIterator.
func isLoop(t *yaml.Node) bool {
	_, _, ok := yamlfile.Lookup(t, "parameterIterator")
	return ok
}

// bodyOf is the name of the component a task runs, or "".
func bodyOf(t *yaml.Node) string {
	n, _, _ := yamlfile.Lookup(t, "componentRef", "name")
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// isDAG reports whether KFP component name has a dag.
func (c *conv) isDAG(name string) bool {
	_, _, ok := yamlfile.Lookup(c.comps, name, "dag")
	return ok
}

// bodyNames returns the step names of the tasks of the body of ParallelFor
// task loop (node t), by body task, and all of them in order; prefix is
// what the names of the enclosing ParallelFors put before them.
func (c *conv) bodyNames(loop string, t *yaml.Node, prefix string) (map[string][]string, []string) {
	budget := maxLoopSteps
	return c.bodyNamesIn(loop, t, prefix, map[string]bool{}, &budget)
}

// bodyNamesIn is bodyNames inside the bodies of the ParallelFors in
// (a body that holds itself has no names: loopTask reports it).
func (c *conv) bodyNamesIn(loop string, t *yaml.Node, prefix string, in map[string]bool, budget *int) (map[string][]string, []string) {
	body := bodyOf(t)
	if in[body] || *budget <= 0 {
		return map[string][]string{}, nil
	}
	in[body] = true
	defer delete(in, body)
	tasks, _, _ := yamlfile.Lookup(c.comps, body, "dag", "tasks")
	keys, values := yamlfile.Pairs(tasks)
	if c.pipelineBody(tasks) {
		*budget--
		return map[string][]string{}, []string{prefix + loop}
	}
	p := prefix + loop + "-"
	single := prefix == "" && len(keys) == 1 && !isLoop(values[0])
	names := map[string][]string{}
	var all []string
	for i, k := range keys {
		switch {
		case isLoop(values[i]):
			_, names[k.Value] = c.bodyNamesIn(k.Value, values[i], p, in, budget)
		case single:
			names[k.Value] = []string{loop}
		default:
			names[k.Value] = []string{p + k.Value}
		}
		*budget -= len(names[k.Value])
		all = append(all, names[k.Value]...)
	}
	return names, all
}

// loopNames returns the step names of the ParallelFor tasks among tasks.
func (c *conv) loopNames(tasks *yaml.Node, prefix string) map[string][]string {
	keys, values := yamlfile.Pairs(tasks)
	out := map[string][]string{}
	for i, k := range keys {
		if isLoop(values[i]) {
			_, out[k.Value] = c.bodyNames(k.Value, values[i], prefix)
		}
	}
	return out
}

// stepsOf is the steps task name of the dag being converted is.
func (c *conv) stepsOf(name string) []string {
	if ns, ok := c.names[name]; ok {
		return ns
	}
	return []string{name}
}
