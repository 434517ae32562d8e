package kfpv2

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// pipelineBody reports whether a ParallelFor body (its dag.tasks) is
// converted as a pipeline that one loop step uses as its component: it
// holds a task whose component is a sub-DAG (a dsl.Condition, a pipeline;
// a ParallelFor does not count) or a task reading another task's output
// (the same iteration's, as pipectl's looped pipeline reads it). A body of
// container tasks and ParallelFors reading none of each other's outputs is
// a loop step per task instead (their names as before), its ParallelFors
// loops over the products.
func (c *conv) pipelineBody(tasks *yaml.Node) bool {
	keys, values := yamlfile.Pairs(tasks)
	names := map[string]bool{}
	for _, k := range keys {
		names[k.Value] = true
	}
	need := false
	for _, t := range values {
		if !isLoop(t) && c.isDAG(bodyOf(t)) {
			need = true
		}
		for _, kind := range []string{"parameters", "artifacts"} {
			ins, _, _ := yamlfile.Lookup(t, "inputs", kind)
			_, vs := yamlfile.Pairs(ins)
			for _, v := range vs {
				for _, src := range []string{"taskOutputParameter", "taskOutputArtifact"} {
					if p, _, ok := yamlfile.Lookup(v, src, "producerTask"); ok && p.Kind == yaml.ScalarNode && names[p.Value] {
						need = true
					}
				}
			}
		}
	}
	return need
}

// loopPipeline converts ParallelFor task key (node t, at field), whose
// body is a pipeline (pipelineBody), into one loop step named after the
// task: its component the body's pipeline, its inputs the task's (outer)
// and the item, its loop the iterator's.
func (c *conv) loopPipeline(key *yaml.Node, t map[string]*yaml.Node, field, prefix, body string, lv *loopLevel, outer *yaml.Node, after []*yaml.Node, afterField string) *yaml.Node {
	ref := t["componentRef"]
	s := c.mapping(key, field, c.str("name", key, field), c.str(prefix+key.Value, key, field))
	delete(c.active, body) // loopTask's mark: component marks it again
	// The body is a pipeline of its own, converted outside the loops.
	savedLoops := c.loops
	c.loops = nil
	comp := c.component(body, ref, field+".componentRef.name")
	c.loops = savedLoops
	c.active[body] = true
	if comp == nil {
		return nil
	}
	c.loopSteps++
	c.add(s, "component", ref, field+".componentRef", comp)
	if outer == nil {
		outer = c.mapping(key, field+".inputs")
	}
	// The item; inside other ParallelFors, this one's item of their product.
	item := "{{item}}"
	if len(c.loops) > 0 {
		item = itemMarker + strconv.Itoa(len(c.loops)) + "}}"
	}
	c.add(outer, lv.item, t["parameterIterator"], field+".parameterIterator.itemInput", c.str(item, t["parameterIterator"], field+".parameterIterator.itemInput"))
	c.add(s, "inputs", key, field+".inputs", outer)
	c.addAfter(s, after, afterField)
	c.loops = append(c.loops, lv)
	c.add(s, "loop", t["parameterIterator"], field+".parameterIterator", c.loopOf())
	c.finishStep(s)
	c.loops = c.loops[:len(c.loops)-1]
	return s
}
