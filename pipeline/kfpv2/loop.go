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
var productListRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{(params\.[^{}]+|steps\.[^{}]+\.outputs\.[^{}.]+|item@[0-9]+(\.[^{}.]+)*)\}\}$`)
})

// itemMarker starts the reference to the item of loop level k while the
// body is converted; finishStep writes it as {{item}} or {{item.lK}}.
const itemMarker = "{{item@"

var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{item@([0-9]+)`) })

// parallelFor is a ParallelFor task being converted into loop steps.
type parallelFor struct {
	// key is the task's name, t its fields, field where it is; prefix is
	// what the enclosing ParallelFors put before the names.
	key    *yaml.Node
	t      map[string]*yaml.Node
	field  string
	prefix string
	// body is the body's component, tasks its dag.tasks.
	body  string
	tasks *yaml.Node
	lv    *loopLevel
	// after are the steps the ParallelFor's steps wait for (from its
	// dependentTasks, at afterField).
	after      []*yaml.Node
	afterField string
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
	if tk, _ := yamlfile.Pairs(tasks); !isDAG || len(tk) == 0 {
		c.errorf(ref["name"], field+".componentRef.name", "the body of a ParallelFor: expected a component with dag.tasks, got %q", body)
		return nil
	}
	l := &parallelFor{key: key, t: t, field: field, prefix: prefix, body: body, tasks: tasks,
		lv: &loopLevel{task: key.Value, item: item, scope: map[string]string{}}}
	// The ParallelFor task's inputs are the body's.
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
	if !c.loopScope(l, outer, nested) || !c.loopItems(l, it["items"]) {
		return nil
	}
	if ip := t["iteratorPolicy"]; ip != nil {
		p := c.fieldsOf(ip, field+".iteratorPolicy", "an iteratorPolicy", []string{"parallelismLimit"}, nil)
		l.lv.limit, l.lv.limitField = p["parallelismLimit"], field+".iteratorPolicy.parallelismLimit"
	}
	// The steps of the ParallelFor wait for what it waits for.
	l.afterField = field + ".dependentTasks"
	l.after = c.loopAfter(t["dependentTasks"], l.afterField)
	if nested {
		if s := c.loopPipeline(key, t, field, prefix, body, l.lv, outer, l.after, l.afterField); s != nil {
			return []*yaml.Node{s}
		}
		return nil
	}
	return c.bodySteps(l, n)
}

// loopScope sets the scope of l's loop level: the values its task gives
// the body's inputs (outer, the task's inputs converted). Unless the body
// is converted as a pipeline (nested), each is a reference.
func (c *conv) loopScope(l *parallelFor, outer *yaml.Node, nested bool) bool {
	ks, vs := yamlfile.Pairs(outer)
	for i, k := range ks {
		// (A body converted as a pipeline takes constants as its inputs.)
		if !nested && (vs[i].Kind != yaml.ScalarNode || !strings.HasPrefix(vs[i].Value, "{{")) {
			c.errorf(k, l.field+".inputs."+k.Value, "a constant input of a ParallelFor task is not supported yet")
			return false
		}
		l.lv.scope[k.Value] = vs[i].Value
	}
	return true
}

// loopItems sets the items of l's loop level from the iterator's items
// (n): a JSON list written in the file (raw) or an input of the task
// (inputParameter); nested ParallelFors each over a list pipectl can
// loop over the product of.
func (c *conv) loopItems(l *parallelFor, n *yaml.Node) bool {
	pf := l.field + ".parameterIterator"
	lv := l.lv
	items := c.fieldsOf(n, pf+".items", "the iterator's items", []string{"raw", "inputParameter"}, nil)
	switch {
	case items["raw"] != nil:
		raw := items["raw"]
		var list yaml.Node
		if err := yaml.Unmarshal([]byte(raw.Value), &list); err != nil || len(list.Content) != 1 || list.Content[0].Kind != yaml.SequenceNode {
			c.errorf(raw, pf+".items.raw", "expected a JSON list, got %q", raw.Value)
			return false
		}
		lv.items = list.Content[0]
		place(lv.items, raw)
		lv.at, lv.field = raw, pf+".items.raw"
	case items["inputParameter"] != nil:
		name := items["inputParameter"].Value
		v, ok := lv.scope[name]
		if !ok {
			c.errorf(items["inputParameter"], pf+".items.inputParameter", "the task has no input %q", name)
			return false
		}
		lv.ref, lv.at, lv.field = v, items["inputParameter"], pf+".items.inputParameter"
	default:
		c.errorf(l.t["parameterIterator"], pf+".items", "missing: items (raw or inputParameter)")
		return false
	}
	if len(c.loops) > 0 {
		for _, o := range append(c.loops, lv) {
			if o.items == nil && !productListRE().MatchString(o.ref) {
				c.errorf(lv.at, lv.field, "a ParallelFor inside a ParallelFor is supported when each loops over a list written in the file (raw), a pipeline input, a task's output or an outer ParallelFor's item (or a field of it): pipectl loops over their product; ParallelFor %q loops over %s", o.task, o.field)
				return false
			}
		}
	}
	return true
}

// loopAfter returns the steps a ParallelFor's dependentTasks d (at
// afterField) name.
func (c *conv) loopAfter(d *yaml.Node, afterField string) []*yaml.Node {
	var after []*yaml.Node
	if d != nil {
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
	return after
}

// bodySteps converts the body of ParallelFor l (its task's node n) task by
// task into loop steps, a ParallelFor in it into those of its own.
func (c *conv) bodySteps(l *parallelFor, n *yaml.Node) []*yaml.Node {
	key, prefix := l.key, l.prefix
	bf := "components." + l.body
	pf := l.field + ".parameterIterator"
	names, _ := c.bodyNames(key.Value, n, prefix)
	savedTasks, savedNames := c.dagTasks, c.names
	c.dagTasks, c.names = l.tasks, names
	c.loops = append(c.loops, l.lv)
	defer func() {
		c.dagTasks, c.names = savedTasks, savedNames
		c.loops = c.loops[:len(c.loops)-1]
	}()
	// A body task is no task of the root DAG.
	savedRoot := c.atRoot
	defer func() { c.atRoot = savedRoot }()
	var steps []*yaml.Node
	tk, tv := yamlfile.Pairs(l.tasks)
	for i, k := range tk {
		c.atRoot, c.final = false, false
		f := bf + ".dag.tasks." + k.Value
		if isLoop(tv[i]) {
			inner := c.loopTask(k, tv[i], f, prefix+key.Value+"-")
			for _, s := range inner {
				c.addAfter(s, l.after, l.afterField)
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
		c.addAfter(s, l.after, l.afterField)
		c.add(s, "loop", l.t["parameterIterator"], pf, c.loopOf())
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
				n.Value = markerRE().ReplaceAllString(n.Value, "{{item")
			} else {
				n.Value = markerRE().ReplaceAllString(n.Value, "{{item.l$1")
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
