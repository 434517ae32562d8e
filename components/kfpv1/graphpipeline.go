package kfpv1

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// A KFP v1 graph component (implementation.graph) is a nested pipeline, as
// KFP v1's SDK resolves it (kfp.components._components._resolve_graph_task):
//
//   - the component's inputs are the params (a default is the param's
//     default), typed as any KFP component's inputs, with KFP's type rules
//     for what they feed;
//   - each task is a step named after its id as KFP derives names
//     ("Xgboost train" is xgboost-train; -2, -3 on collisions);
//   - an argument is a literal, {graphInput: {inputName}} (the param) or
//     {taskOutput: {taskId, outputName}} (that task's output); the
//     arguments' keys and outputName are KFP names of the task's component;
//   - outputValues are the outputs, each a taskOutput.
//
// A componentRef resolves offline, in this order: spec (the component
// inline); url, when it is a path (relative to the graph's file) or a
// GitHub file url (https://raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH
// or https://github.com/OWNER/REPO/blob|raw/COMMIT/PATH): the file PATH of
// the repository checkout that holds the graph's file (the nearest
// directory above it that has PATH); name: NAME/component.yaml there (as
// KFP's ComponentStore searches its local paths). KFP neither checks a
// digest, and pipectl does not either: the file found is the checkout's
// version of the component. Any other reference is an error at its line.

// graphSynth writes a graph as the YAML of a pipeline whose nodes carry
// the graph's lines and columns, so that the pipeline's checks point into
// the KFP file; fields maps the pipeline's field paths to the graph's.
type graphSynth struct {
	g      *Graph
	fields map[string]string
	// stepOf is the step name of each task id.
	stepOf map[string]string
	// comps are the tasks' components, by task id (nil when it did not load:
	// the pipeline's checks report why).
	comps map[string]*components.Component
	errs  []error
	// root is the directory componentRefs must stay in (see refRoot).
	root string
}

func (s *graphSynth) errorf(n *yaml.Node, field, format string, args ...any) {
	s.errs = append(s.errs, s.g.File.Errorf(n, field, format, args...))
}

// scalar and mapping make nodes of the pipeline at the line and column of
// the graph's node at (every node has one, so every message points into
// the KFP file).
func scalar(value string, at *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: at.Line, Column: at.Column}
}

func mapping(at *yaml.Node, kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv, Line: at.Line, Column: at.Column}
}

// Pipeline writes the graph of c (a graph component, whose graph g is) as
// the YAML of a pipeline, to be loaded as a nested pipeline: its nodes
// carry the graph's lines and columns, so that the pipeline's checks point
// into the KFP file, and translate rewrites the field paths of the errors
// loading it gives from the pipeline's terms to the graph's. pipelineFile
// is the pipeline being loaded, which bounds where componentRefs may lead
// (see refRoot).
func (g *Graph) Pipeline(c *components.Component, pipelineFile string) (root *yaml.Node, translate func(error) error, err error) {
	s := &graphSynth{g: g, fields: map[string]string{}, stepOf: map[string]string{}, root: refRoot(g.File.Path, absPath(pipelineFile))}
	root, err = s.pipeline(c)
	return root, s.translate, err
}

// pipeline is the pipeline the graph of c is.
func (s *graphSynth) pipeline(c *components.Component) (*yaml.Node, error) {
	g := s.g
	gf := g.Field
	tasksNode, tasksKey, _ := yamlfile.Lookup(g.Node, "tasks")
	if tasksKey == nil || tasksNode.Kind != yaml.MappingNode || len(tasksNode.Content) == 0 {
		s.errorf(g.Node, gf+".tasks", "missing: tasks (a mapping of task ids to tasks)")
		return nil, errors.Join(s.errs...)
	}
	if keys, _ := yamlfile.Pairs(g.Node); len(keys) > 0 {
		for _, k := range keys {
			if k.Value != "tasks" && k.Value != "outputValues" {
				s.errorf(k, gf+"."+k.Value, "unknown field %q of a KFP graph (expected tasks, outputValues)", k.Value)
			}
		}
	}
	params := mapping(s.g.Node)
	for j, in := range c.Inputs {
		prm := mapping(s.g.Node, scalar("type", s.g.Node), scalar(in.Type, s.g.Node))
		if in.HasDefault() {
			d := in.Default
			prm.Content = append(prm.Content, scalar("default", s.g.Node), &d)
		}
		params.Content = append(params.Content, scalar(in.Name, s.g.Node), prm)
		s.fields["params."+in.Name] = fmt.Sprintf("inputs[%d]", j)
	}
	ids, tasks := yamlfile.Pairs(tasksNode)
	used := map[string]bool{}
	for _, id := range ids {
		name := kfpResourceName(id.Value)
		if name == "" {
			name = "task"
		}
		base := name
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s-%d", base, k)
		}
		used[name] = true
		s.stepOf[id.Value] = name
	}
	s.comps = map[string]*components.Component{}
	steps := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: tasksNode.Line, Column: tasksNode.Column}
	for k, id := range ids {
		steps.Content = append(steps.Content, s.task(k, id, tasks[k]))
	}
	outputs := mapping(s.g.Node)
	outKeys, outValues := yamlfile.Pairs(lookup(g.Node, "outputValues"))
	for k, key := range outKeys {
		field := gf + ".outputValues." + key.Value
		name, ok := g.Outputs[key.Value]
		if !ok {
			s.errorf(key, field, "the component has no output %q", key.Value)
			continue
		}
		val := s.argument(outValues[k], field, false)
		if val == nil {
			continue
		}
		outputs.Content = append(outputs.Content, scalar(name, key), val)
		s.fields["outputs."+name] = field
	}
	if len(s.errs) > 0 {
		return nil, errors.Join(s.errs...)
	}
	s.fields["steps"] = gf + ".tasks"
	s.fields["metadata.name"] = "name"
	return mapping(s.g.Node,
		scalar("apiVersion", s.g.Node), scalar(components.APIVersion, s.g.Node),
		scalar("kind", s.g.Node), scalar("Pipeline", s.g.Node),
		scalar("metadata", s.g.Node), mapping(s.g.Node, scalar("name", s.g.Node), scalar(c.Metadata.Name, s.g.Node)),
		scalar("params", s.g.Node), params,
		scalar("steps", s.g.Node), steps,
		scalar("outputs", s.g.Node), outputs,
	), nil
}

func lookup(n *yaml.Node, key string) *yaml.Node {
	v, _, ok := yamlfile.Lookup(n, key)
	if !ok {
		return nil
	}
	return v
}

// task is the step of task k (id, node n).
func (s *graphSynth) task(k int, id, n *yaml.Node) *yaml.Node {
	field := s.g.Field + ".tasks." + id.Value
	step := fmt.Sprintf("steps[%d]", k)
	s.fields[step] = field
	s.fields[step+".name"] = field
	s.fields[step+".component"] = field + ".componentRef"
	out := mapping(id, scalar("name", id), scalar(s.stepOf[id.Value], id))
	keys, values := yamlfile.Pairs(n)
	if n.Kind != yaml.MappingNode {
		s.errorf(n, field, "expected a task: a mapping with componentRef and arguments")
		return out
	}
	var ref, args *yaml.Node
	for j, key := range keys {
		switch key.Value {
		case "componentRef":
			ref = values[j]
		case "arguments":
			args = values[j]
		case "annotations":
		default:
			// isEnabled, executionOptions: run-time options pipectl does not map.
			s.errorf(key, field+"."+key.Value, "KFP task option %q is not supported (supported: componentRef, arguments, annotations)", key.Value)
		}
	}
	if ref == nil {
		s.errorf(id, field, "missing: componentRef")
		return out
	}
	comp := s.componentRef(ref, field+".componentRef")
	if comp == nil {
		return out
	}
	out.Content = append(out.Content, scalar("component", ref), comp)
	c := s.load(comp)
	s.comps[id.Value] = c
	inputs := mapping(ref)
	if args != nil {
		inputs = mapping(args)
	}
	argKeys, argValues := yamlfile.Pairs(args)
	if args != nil && args.Kind != yaml.MappingNode {
		s.errorf(args, field+".arguments", "expected a mapping of input names to arguments")
	}
	names := map[string]string{}
	if c != nil {
		names = kfpIONames(c, true)
	}
	for j, key := range argKeys {
		afield := field + ".arguments." + key.Value
		name := key.Value
		if c != nil {
			var ok bool
			if name, ok = names[key.Value]; !ok {
				s.errorf(key, afield, "component %s has no input %q (inputs: %s)", c.Metadata.Name, key.Value, strings.Join(kfpNames(c.Inputs), ", "))
				continue
			}
		}
		val := s.argument(argValues[j], afield, true)
		if val == nil {
			continue
		}
		inputs.Content = append(inputs.Content, scalar(name, key), val)
		s.fields[step+".inputs."+name] = afield
	}
	out.Content = append(out.Content, scalar("inputs", inputs), inputs)
	return out
}

// load loads a task's component for its names (nil when it does not load;
// the pipeline's checks report why).
func (s *graphSynth) load(comp *yaml.Node) *components.Component {
	if comp.Kind == yaml.MappingNode {
		c, _, _ := Decode(s.g.File, comp, "")
		return c
	}
	path := comp.Value
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(s.g.File.Path), path)
	}
	c, _, _ := Load(path)
	return c
}

// kfpIONames maps the KFP names of c's inputs (or outputs) to pipectl's,
// and pipectl's to themselves.
func kfpIONames(c *components.Component, inputs bool) map[string]string {
	ios := c.Outputs
	if inputs {
		ios = c.Inputs
	}
	out := map[string]string{}
	for _, io := range ios {
		out[io.Name] = io.Name
		if io.Declared != nil {
			out[io.Declared.Name] = io.Name
		}
	}
	return out
}

func kfpNames(ios []components.IO) []string {
	var out []string
	for _, io := range ios {
		if io.Declared != nil {
			out = append(out, io.Declared.Name)
		} else {
			out = append(out, io.Name)
		}
	}
	return out
}

// argument is the step input value of a graph argument (or output value,
// which only a taskOutput may be): a literal as written, "{{params.P}}" or
// "{{steps.S.outputs.O}}", at the argument's line and column.
func (s *graphSynth) argument(n *yaml.Node, field string, graphInputOK bool) *yaml.Node {
	if n.Kind == yaml.ScalarNode {
		if strings.Contains(n.Value, "{{") {
			s.errorf(n, field, "a literal argument holding {{ is not supported (pipectl would read it as a reference)")
			return nil
		}
		return n
	}
	keys, values := yamlfile.Pairs(n)
	if len(keys) != 1 {
		s.errorf(n, field, "expected a literal, {graphInput: {inputName: NAME}} or {taskOutput: {taskId: ID, outputName: NAME}}")
		return nil
	}
	ref, body := keys[0], values[0]
	switch ref.Value {
	case "graphInput":
		if !graphInputOK {
			s.errorf(ref, field+".graphInput", "an output value must be a taskOutput (a graph input as a graph output is not supported)")
			return nil
		}
		in := lookup(body, "inputName")
		if in == nil {
			s.errorf(body, field+".graphInput", "missing: inputName")
			return nil
		}
		name, ok := s.g.Inputs[in.Value]
		if !ok {
			s.errorf(in, field+".graphInput.inputName", "the graph component has no input %q", in.Value)
			return nil
		}
		return scalar("{{params."+name+"}}", n)
	case "taskOutput":
		task, out := lookup(body, "taskId"), lookup(body, "outputName")
		if task == nil || out == nil {
			s.errorf(body, field+".taskOutput", "missing: taskId and outputName")
			return nil
		}
		step, ok := s.stepOf[task.Value]
		if !ok {
			s.errorf(task, field+".taskOutput.taskId", "unknown task %q (tasks: %s)", task.Value, strings.Join(s.taskIDs(), ", "))
			return nil
		}
		name := out.Value
		if c := s.comps[task.Value]; c != nil {
			if name, ok = kfpIONames(c, false)[out.Value]; !ok {
				s.errorf(out, field+".taskOutput.outputName", "task %q (component %s) has no output %q (outputs: %s)", task.Value, c.Metadata.Name, out.Value, strings.Join(kfpNames(c.Outputs), ", "))
				return nil
			}
		} else if _, loaded := s.comps[task.Value]; !loaded {
			// A task listed later: its component is loaded now for its names.
			if c := s.loadTask(task.Value); c != nil {
				if name, ok = kfpIONames(c, false)[out.Value]; !ok {
					s.errorf(out, field+".taskOutput.outputName", "task %q (component %s) has no output %q (outputs: %s)", task.Value, c.Metadata.Name, out.Value, strings.Join(kfpNames(c.Outputs), ", "))
					return nil
				}
			}
		}
		return scalar("{{steps."+step+".outputs."+name+"}}", n)
	}
	s.errorf(ref, field+"."+ref.Value, "unknown argument %q (expected a literal, graphInput or taskOutput)", ref.Value)
	return nil
}

// loadTask loads the component of the task id for its names.
func (s *graphSynth) loadTask(id string) *components.Component {
	ids, tasks := yamlfile.Pairs(lookup(s.g.Node, "tasks"))
	for k, key := range ids {
		if key.Value != id {
			continue
		}
		ref := lookup(tasks[k], "componentRef")
		if ref == nil {
			return nil
		}
		errs := len(s.errs)
		comp := s.componentRef(ref, "")
		s.errs = s.errs[:errs] // reported with the task itself
		if comp == nil {
			return nil
		}
		c := s.load(comp)
		s.comps[id] = c
		return c
	}
	return nil
}

func (s *graphSynth) taskIDs() []string {
	var out []string
	for id := range s.stepOf {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// componentRef resolves a task's componentRef (see the package doc): the
// step's component node, a path or an inline component.
func (s *graphSynth) componentRef(ref *yaml.Node, field string) *yaml.Node {
	if ref.Kind != yaml.MappingNode {
		s.errorf(ref, field, "expected a componentRef: a mapping with spec, url, name or digest")
		return nil
	}
	if spec := lookup(ref, "spec"); spec != nil {
		return spec
	}
	dir := filepath.Dir(s.g.File.Path)
	if u := lookup(ref, "url"); u != nil {
		p, err := repoPath(u.Value)
		if err != nil {
			s.errorf(u, field+".url", "%v", err)
			return nil
		}
		if !strings.Contains(u.Value, "://") {
			rel := filepath.FromSlash(p)
			if !within(s.root, filepath.Join(absPath(dir), rel)) {
				s.errorf(u, field+".url", "%s leaves %s: a componentRef names a file inside the repository checkout that holds the graph (or the pipeline's folder outside a checkout)", u.Value, s.root)
				return nil
			}
			return scalar(rel, ref) // relative to the graph's file, as a step's component path
		}
		if found := findInCheckout(dir, p, s.root); found != "" {
			return scalar(found, ref)
		}
		s.errorf(u, field+".url", "cannot resolve %s offline: no directory from %s up to %s holds %s (pipectl reads the component from the repository checkout the graph's file is in; put the file there, or give the component inline as componentRef.spec)", u.Value, dir, s.root, p)
		return nil
	}
	if name := lookup(ref, "name"); name != nil {
		if name.Value == "" || strings.HasPrefix(name.Value, "/") || filepath.IsAbs(name.Value) {
			s.errorf(name, field+".name", "expected a component name (a path in the repository checkout, such as sample/add), got %q", name.Value)
			return nil
		}
		p := name.Value + "/component.yaml"
		if found := findInCheckout(dir, p, s.root); found != "" {
			return scalar(found, ref)
		}
		s.errorf(name, field+".name", "cannot resolve component %q offline: no directory from %s up to %s holds %s", name.Value, dir, s.root, p)
		return nil
	}
	s.errorf(ref, field, "cannot resolve a componentRef with only a digest or tag offline (give url, name or spec)")
	return nil
}

// repoPath is the file path a componentRef url names: the path itself for
// a relative path, PATH for a GitHub file url.
func repoPath(ref string) (string, error) {
	if !strings.Contains(ref, "://") {
		if ref == "" || filepath.IsAbs(ref) || strings.HasPrefix(ref, "/") {
			return "", fmt.Errorf("expected a url or a path relative to the graph's file, got %q", ref)
		}
		return ref, nil
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("invalid url %q: %v", ref, err)
	}
	// u.Path is unescaped: %2e%2e is "..".
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	var p string
	switch {
	case u.Host == "raw.githubusercontent.com" && len(parts) > 3:
		p = strings.Join(parts[3:], "/")
	case u.Host == "github.com" && len(parts) > 4 && (parts[2] == "raw" || parts[2] == "blob"):
		p = strings.Join(parts[4:], "/")
	default:
		return "", fmt.Errorf("cannot resolve %s offline: expected a GitHub file url (https://raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH), a path relative to the graph's file, componentRef.name or componentRef.spec", ref)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" || strings.Contains(seg, "\\") {
			return "", fmt.Errorf("cannot resolve %s offline: its path %q has an empty, . or .. segment (expected a file's path in the repository)", ref, p)
		}
	}
	return p, nil
}

// refRoot is the directory a graph's componentRefs must stay in: the git
// work tree that holds the graph's file (the nearest directory above it
// with a .git), or, outside any, the folder of the pipeline being loaded
// (pipeline, absolute) when it holds the graph's file, else the graph's
// file's own folder.
func refRoot(graphFile, pipeline string) string {
	dir := filepath.Dir(absPath(graphFile))
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if pdir := filepath.Dir(pipeline); within(pdir, dir) {
		return pdir
	}
	return dir
}

// within reports whether path is root or below it, once both are cleaned
// and, where they exist, their symbolic links resolved.
func within(root, path string) bool {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// findInCheckout returns DIR/p for the nearest directory DIR from dir up
// to root where that is a regular file inside root, or "".
func findInCheckout(dir, p, root string) string {
	d := absPath(dir)
	if !within(root, d) {
		return ""
	}
	for {
		cand := filepath.Join(d, filepath.FromSlash(p))
		if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() && within(root, cand) {
			return cand
		}
		if filepath.Clean(d) == filepath.Clean(root) {
			return ""
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// translate rewrites the field paths of errors in the graph's file from
// the pipeline's terms to the graph's.
func (s *graphSynth) translate(err error) error {
	var out []error
	for _, e := range yamlfile.Split(err) {
		var ye *yamlfile.Error
		if errors.As(e, &ye) && ye.File == s.g.File.Path {
			t := *ye
			best := ""
			for from := range s.fields {
				if (t.Field == from || strings.HasPrefix(t.Field, from+".") || strings.HasPrefix(t.Field, from+"[")) && len(from) > len(best) {
					best = from
				}
			}
			if best != "" {
				t.Field = s.fields[best] + t.Field[len(best):]
			}
			e = &t
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return filepath.Clean(a)
	}
	return filepath.Clean(path)
}
