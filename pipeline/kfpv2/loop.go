package kfpv2

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// A KFP ParallelFor (a task with a parameterIterator whose component is a
// sub-DAG, the loop's body) becomes loop steps: each container task of the
// body is a step of its own with loop.items the iterator's items, so
// iteration i of the body is iteration i of each of them. The steps are
// named LOOP-TASK (LOOP the ParallelFor task, nested loops LOOP-INNER-TASK),
// except that a body of one task is one step named LOOP.
//
//   - items.raw (a JSON list as written) and items.inputParameter (a task
//     input holding a JSON list) are loop.items; the iteratorPolicy's
//     parallelismLimit is loop.parallelism;
//   - the item is {{item}}, a field of it (parameterExpressionSelector
//     parseJson(string_value)["F"]) {{item.F}}; the body's other inputs are
//     the values the ParallelFor task gives them;
//   - a ParallelFor in a body, both over lists written in the file, loops
//     over their product: each item is {"l0": OUTER, "l1": INNER} and the
//     outer item is {{item.l0}}, the inner {{item.l1}}; when a list is a
//     pipeline input, a task's output, or the outer item or a field of it
//     (the inner iterator's inputParameter an input the ParallelFor task
//     gives the outer item, with a parameterExpressionSelector for a field:
//     KFP's "-subvar-F" input), over their product at run time
//     (loop.product: {l0: "{{params.P}}", l1: "{{item.l0.F}}"}, the inner
//     list taken from each outer item, as KFP iterates);
//   - a body task's dependentTasks on another task of the body wait for all
//     of that task's iterations (KFP waits for the same iteration's only);
//   - a task after the ParallelFor waits for all its steps; an output of
//     the ParallelFor (the body's dag.outputs, dsl.Collected) is the output
//     of the body task it names, collected by pipectl into a JSON list (an
//     output parameter) or a directory of the iterations' artifacts (an
//     output artifact, KFP's List[Artifact]).
//
// A body holding no ParallelFor, but a task whose component is a sub-DAG
// (dsl.Condition, a pipeline) or a task reading another body task's output,
// is one loop step instead, named LOOP, whose component is the body as a
// pipeline (pipelineBody, loopPipeline): its steps LOOP.TASK loop over the
// items and read each other's outputs iteration by iteration, and the
// ParallelFor's outputs are the pipeline's, collected.
//
// A condition in such a body, on the item or another body task's output,
// is a when pipectl evaluates iteration by iteration. Such a body in a
// nested ParallelFor is one loop step OUTER-INNER over their product.
//
// The collected outputs of a nested ParallelFor are one list of every
// iteration of the product, the outer iteration first, as KFP's driver
// collects them (CollectInputs), though KFP's SDK types them as a list of
// lists.
//
// A ParallelFor in a body converted as a pipeline is a loop step of that
// pipeline: pipectl loops it over the product of both lists (a loop inside
// a looped pipeline), a body task reading its collected outputs gets those
// of its own iteration, and pipectl refuses what it cannot run there (its
// own body a pipeline).

// maxLoopSteps bounds the steps the ParallelFors of a file become, and
// maxProduct the items of a loop over the product of nested lists: a
// body holding several ParallelFors over a body holding several, and so
// on, would otherwise double the steps at every level.
const (
	maxLoopSteps = 10000
	maxProduct   = 10000
)

// loopLevel is one ParallelFor whose body is being converted.
type loopLevel struct {
	// task is the ParallelFor task; item its itemInput; scope the values
	// of the body's inputs, as the ParallelFor task gives them.
	task, item string
	scope      map[string]string
	// items is the list written in the file (a sequence), or nil; ref is
	// then the reference holding the list. at and field are the items'.
	items *yaml.Node
	ref   string
	at    *yaml.Node
	field string
	// limit is the iteratorPolicy's parallelismLimit, or nil; limitField
	// its field.
	limit      *yaml.Node
	limitField string
}

// productListRE matches what a list of pipectl's loop.product may be
// besides a list written in the file: a whole reference to a pipeline
// param or a task's output, or the item of an outer loop level (a marker,
// see itemMarker), or a field of it.
var productListRE = regexp.MustCompile(`^\{\{(params\.[^{}]+|steps\.[^{}]+\.outputs\.[^{}.]+|item@[0-9]+(\.[^{}.]+)*)\}\}$`)

// itemMarker starts the reference to the item of loop level k while the
// body is converted; finishStep writes it as {{item}} or {{item.lK}}.
const itemMarker = "{{item@"

var markerRE = regexp.MustCompile(`\{\{item@([0-9]+)`)

var selectorRE = regexp.MustCompile(`^parseJson\(string_value\)\["([A-Za-z_][A-Za-z0-9_]*)"\]$`)

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
	m := selectorRE.FindStringSubmatch(selector.Value)
	if m == nil {
		return "", fmt.Errorf("parameterExpressionSelector %q is not supported (supported: parseJson(string_value)[\"FIELD\"], a field of the loop item)", selector.Value)
	}
	return strings.TrimSuffix(v, "}}") + "." + m[1] + "}}", nil
}

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

// loopTask converts ParallelFor task key (node n, at field) into its loop
// steps; prefix is what the enclosing ParallelFors put before the names.
func (c *conv) loopTask(key, n *yaml.Node, field, prefix string) []*yaml.Node {
	t := c.fieldsOf(n, field, "a task", []string{"componentRef", "inputs", "dependentTasks", "taskInfo", "parameterIterator", "iteratorPolicy"}, map[string]string{
		"triggerPolicy":  " on a ParallelFor task",
		"cachingOptions": " on a ParallelFor task",
		"retryPolicy":    " on a ParallelFor task",
	})
	pf := field + ".parameterIterator"
	it := c.fieldsOf(t["parameterIterator"], pf, "a parameterIterator", []string{"itemInput", "items"}, nil)
	item, ok := c.scalarOf(it["itemInput"], pf+".itemInput", "the item's input name")
	if !ok {
		if it["itemInput"] == nil {
			c.errorf(t["parameterIterator"], pf, "missing: itemInput")
		}
		return nil
	}
	ref := c.fieldsOf(t["componentRef"], field+".componentRef", "a componentRef", []string{"name"}, nil)
	body, ok := c.scalarOf(ref["name"], field+".componentRef.name", "a component name")
	if !ok {
		if t["componentRef"] == nil {
			c.errorf(key, field, "missing: componentRef")
		}
		return nil
	}
	bf := "components." + body
	if c.loopSteps >= maxLoopSteps {
		c.errorf(key, field, "the ParallelFors of the file become more than %d loop steps", maxLoopSteps)
		return nil
	}
	if c.active[body] {
		c.errorf(ref["name"], field+".componentRef.name", "component %q uses itself", body)
		return nil
	}
	c.active[body] = true
	defer delete(c.active, body)
	tasks, _, isDAG := yamlfile.Lookup(c.comps, body, "dag", "tasks")
	tk, tv := yamlfile.Pairs(tasks)
	if !isDAG || len(tk) == 0 {
		c.errorf(ref["name"], field+".componentRef.name", "the body of a ParallelFor: expected a component with dag.tasks, got %q", body)
		return nil
	}
	// The ParallelFor task's inputs are the body's.
	lv := &loopLevel{task: key.Value, item: item, scope: map[string]string{}}
	var outer *yaml.Node
	if in := t["inputs"]; in != nil {
		n0 := len(c.errs)
		outer = c.taskInputs(in, field+".inputs", body)
		if len(c.errs) > n0 {
			// The body would only report the inputs missing.
			return nil
		}
	}
	nested := c.pipelineBody(tasks)
	ks, vs := yamlfile.Pairs(outer)
	for i, k := range ks {
		// (A body converted as a pipeline takes constants as its inputs.)
		if !nested && (vs[i].Kind != yaml.ScalarNode || !strings.HasPrefix(vs[i].Value, "{{")) {
			c.errorf(k, field+".inputs."+k.Value, "a constant input of a ParallelFor task is not supported yet")
			return nil
		}
		lv.scope[k.Value] = vs[i].Value
	}
	items := c.fieldsOf(it["items"], pf+".items", "the iterator's items", []string{"raw", "inputParameter"}, nil)
	switch {
	case items["raw"] != nil:
		raw := items["raw"]
		var list yaml.Node
		if err := yaml.Unmarshal([]byte(raw.Value), &list); err != nil || len(list.Content) != 1 || list.Content[0].Kind != yaml.SequenceNode {
			c.errorf(raw, pf+".items.raw", "expected a JSON list, got %q", raw.Value)
			return nil
		}
		lv.items = list.Content[0]
		place(lv.items, raw)
		lv.at, lv.field = raw, pf+".items.raw"
	case items["inputParameter"] != nil:
		name := items["inputParameter"].Value
		v, ok := lv.scope[name]
		if !ok {
			c.errorf(items["inputParameter"], pf+".items.inputParameter", "the task has no input %q", name)
			return nil
		}
		lv.ref, lv.at, lv.field = v, items["inputParameter"], pf+".items.inputParameter"
	default:
		c.errorf(t["parameterIterator"], pf+".items", "missing: items (raw or inputParameter)")
		return nil
	}
	if len(c.loops) > 0 {
		for _, l := range append(c.loops, lv) {
			if l.items == nil && !productListRE.MatchString(l.ref) {
				c.errorf(lv.at, lv.field, "a ParallelFor inside a ParallelFor is supported when each loops over a list written in the file (raw), a pipeline input, a task's output or an outer ParallelFor's item (or a field of it): pipectl loops over their product; ParallelFor %q loops over %s", l.task, l.field)
				return nil
			}
		}
	}
	if ip := t["iteratorPolicy"]; ip != nil {
		p := c.fieldsOf(ip, field+".iteratorPolicy", "an iteratorPolicy", []string{"parallelismLimit"}, nil)
		lv.limit, lv.limitField = p["parallelismLimit"], field+".iteratorPolicy.parallelismLimit"
	}
	// The steps of the ParallelFor wait for what it waits for.
	var after []*yaml.Node
	afterField := field + ".dependentTasks"
	if d := t["dependentTasks"]; d != nil {
		if d.Kind != yaml.SequenceNode {
			c.errorf(d, afterField, "expected a list of task names")
		}
		for j, e := range d.Content {
			ef := fmt.Sprintf("%s[%d]", afterField, j)
			if v, ok := c.scalarOf(e, ef, "a task name"); ok {
				for _, name := range c.stepsOf(v) {
					after = append(after, c.str(name, e, ef))
				}
			}
		}
	}
	if nested {
		if s := c.loopPipeline(key, t, field, prefix, body, lv, outer, after, afterField); s != nil {
			return []*yaml.Node{s}
		}
		return nil
	}
	names, _ := c.bodyNames(key.Value, n, prefix)
	savedTasks, savedNames := c.dagTasks, c.names
	c.dagTasks, c.names = tasks, names
	c.loops = append(c.loops, lv)
	defer func() {
		c.dagTasks, c.names = savedTasks, savedNames
		c.loops = c.loops[:len(c.loops)-1]
	}()
	// A body task is no task of the root DAG.
	savedRoot := c.atRoot
	defer func() { c.atRoot = savedRoot }()
	var steps []*yaml.Node
	for i, k := range tk {
		c.atRoot, c.final = false, false
		f := bf + ".dag.tasks." + k.Value
		if isLoop(tv[i]) {
			inner := c.loopTask(k, tv[i], f, prefix+key.Value+"-")
			for _, s := range inner {
				c.addAfter(s, after, afterField)
			}
			steps = append(steps, inner...)
			continue
		}
		if sub := bodyOf(tv[i]); sub != "" && c.isDAG(sub) {
			c.errorf(k, f, "a task of a ParallelFor body whose component is a sub-DAG (%s: dsl.Condition, dsl.ExitHandler or a pipeline) is not supported yet: pipectl loops container tasks", sub)
			continue
		}
		s := c.task(k, tv[i], f)
		if s == nil || c.final {
			continue
		}
		c.loopSteps++
		// The step's name, what it waits for and its loop.
		s.Content[1] = c.str(names[k.Value][0], k, f)
		c.addAfter(s, after, afterField)
		c.add(s, "loop", t["parameterIterator"], pf, c.loopOf())
		c.finishStep(s)
		steps = append(steps, s)
	}
	return steps
}

// addAfter adds names (from field) to the after of step s.
func (c *conv) addAfter(s *yaml.Node, names []*yaml.Node, field string) {
	if len(names) == 0 {
		return
	}
	a, _, ok := yamlfile.Lookup(s, "after")
	if !ok {
		a = c.seq(names[0], field)
		c.add(s, "after", names[0], field, a)
	}
	for _, n := range names {
		dup := false
		for _, e := range a.Content {
			dup = dup || e.Value == n.Value
		}
		if !dup {
			a.Content = append(a.Content, n)
		}
	}
}

// loopOf is the loop of a step in the body of the ParallelFors being
// converted: the innermost's items, or the product of all of them.
func (c *conv) loopOf() *yaml.Node {
	inner := c.loops[len(c.loops)-1]
	loop := c.mapping(inner.at, inner.field)
	if len(c.loops) == 1 {
		if inner.items != nil {
			c.add(loop, "items", inner.at, inner.field, inner.items)
		} else {
			c.add(loop, "items", inner.at, inner.field, c.str(inner.ref, inner.at, inner.field))
		}
		if inner.limit != nil {
			c.add(loop, "parallelism", inner.limit, inner.limitField, inner.limit)
		}
		return loop
	}
	if slices.ContainsFunc(c.loops, func(l *loopLevel) bool { return l.items == nil }) {
		// A list given at run time: pipectl's loop.product, {"l0": OUTER,
		// "l1": INNER, ...} as below.
		prod := c.mapping(inner.at, inner.field)
		for k, l := range c.loops {
			list := l.items
			if list == nil {
				list = c.str(l.ref, l.at, l.field)
			}
			c.add(prod, "l"+strconv.Itoa(k), l.at, l.field, list)
		}
		c.add(loop, "product", inner.at, inner.field, prod)
		c.addLimit(loop, inner)
		return loop
	}
	// The product, outermost first: {"l0": OUTER, "l1": INNER, ...}.
	size := 1
	for _, l := range c.loops {
		size *= max(len(l.items.Content), 1)
		if size > maxProduct {
			c.errorf(inner.at, inner.field, "the ParallelFors over lists in the file nested here loop over more than %d items together", maxProduct)
			return loop
		}
	}
	prod := []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	for k, l := range c.loops {
		var next []*yaml.Node
		for _, p := range prod {
			for _, it := range l.items.Content {
				m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: it.Line, Column: it.Column}
				m.Content = append(append(m.Content, p.Content...), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "l" + strconv.Itoa(k), Line: it.Line, Column: it.Column}, it)
				next = append(next, m)
			}
		}
		prod = next
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: prod, Line: inner.at.Line, Column: inner.at.Column}
	c.add(loop, "items", inner.at, inner.field, seq)
	c.addLimit(loop, inner)
	return loop
}

// addLimit sets the parallelism of loop, a product's (inner the innermost
// ParallelFor's): at most the product of the limits run at once; no bound
// if one level has none.
func (c *conv) addLimit(loop *yaml.Node, inner *loopLevel) {
	limit := 1
	for _, l := range c.loops {
		n, err := strconv.Atoi(valueOf(l.limit))
		if err != nil || n <= 0 {
			return
		}
		limit *= n
	}
	c.add(loop, "parallelism", inner.at, inner.field, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(limit), Line: inner.at.Line, Column: inner.at.Column})
}

func valueOf(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// finishStep writes the item markers of a step in the body of the
// ParallelFors being converted: {{item}} in one, {{item.lK}} in a product.
func (c *conv) finishStep(s *yaml.Node) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, itemMarker) {
			if len(c.loops) == 1 {
				n.Value = markerRE.ReplaceAllString(n.Value, "{{item")
			} else {
				n.Value = markerRE.ReplaceAllString(n.Value, "{{item.l$1")
			}
		}
		for _, e := range n.Content {
			walk(e)
		}
	}
	// The component (the step's second key) holds no marker.
	for i := 0; i+1 < len(s.Content); i += 2 {
		if s.Content[i].Value != "component" {
			walk(s.Content[i+1])
		}
	}
}

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
