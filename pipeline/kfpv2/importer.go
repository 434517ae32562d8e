package kfpv2

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/yamlfile"
)

// An importer (dsl.importer) is a task whose executor is importer:
// KFP's driver registers the artifact at artifactUri (a constant, or the
// task's input parameter runtimeParameter names) with the type
// typeSchema, and the tasks reading its output read that URI; nothing is
// copied. pipectl's equivalent is an artifact param (see `pipectl
// help nested`): the URI of an artifact in the artifact
// store, which each step reading it fetches and checks by its sha256. So a
// root importer is no step: the tasks reading its output read
//
//   - the root input parameter its URI is (componentInputParameter), made
//     an artifact param of the importer's type, its defaultValue the
//     param's default; the run gives another with -p NAME=URI;
//   - or, for a constant URI, an artifact param named after the task, the
//     constant its default.
//
// A URI may also name an object of Cloud Storage or S3 (gs://, s3://
// outside the store) or a ModelCar (oci://, its /models folder): `pipectl
// run` copies it into the store before any step runs (pipeline/imports). The importer's metadata is the param's
// (pipeline.Param.Metadata), its placeholders {{$.inputs.parameters['X']}}
// made {{params.P}} or the constant the task gives X. An importer inside a
// sub-DAG (not a ParallelFor body) whose URI is an input of the sub-DAG
// passed down from root input parameters makes that input an artifact
// param of the sub-DAG, and of each sub-DAG on the way, and the root
// parameters artifact params (scanSubImports).
//
// Metadata given by a task's output parameter (the importer task runs
// after that task) embeds the output's reference: a step reading the param
// waits for that task and gets its value in the metadata
// (pipeline.Param.Metadata), as KFP's local runner fills the importer's
// metadata in.
//
// A URI neither a store nor an import can hold (http://, ...) is
// an error at its line, as are one given by a task output, a constant URI
// in a sub-DAG, metadata given by a task output in a sub-DAG and
// downloadToWorkspace.
// reimport is the same either way: the artifact is the store's, read where
// it is.

// rootImport is the artifact param a root importer task is.
type rootImport struct {
	// param is the root param; typ its artifact type.
	param, typ string
	// def is the default of a param made for a constant URI; nil for a
	// root input parameter.
	def *yaml.Node
	at  *yaml.Node
	// meta is the param's metadata (the importer's, its placeholders
	// made {{params.NAME}} or the constants they name); nil for none.
	meta *yaml.Node
	// metaJSON is meta's JSON text, to compare importers of one param.
	metaJSON string
	// For an importer of a sub-DAG (param its input): roots are the root
	// input parameters the URI comes from, chain the sub-DAG inputs,
	// [component, input], that pass it down (each an artifact param).
	roots []string
	chain [][2]string
}

// importerOf returns the importer node of KFP component name's executor,
// or nil when it has none.
func (c *conv) importerOf(name string) *yaml.Node {
	label := c.executorOf(name)
	if label == "" {
		return nil
	}
	n, _, ok := yamlfile.Lookup(c.execs, label, "importer")
	if !ok {
		return nil
	}
	return n
}

// rootImports reads the importer tasks of the root DAG (tasks), returning
// what each is, by task name. Errors are reported; a task in error is
// left out.
func (c *conv) rootImports(tasks *yaml.Node) map[string]rootImport {
	out := map[string]rootImport{}
	keys, values := yamlfile.Pairs(tasks)
	for i, k := range keys {
		ref, _, ok := yamlfile.Lookup(values[i], "componentRef", "name")
		if !ok || ref.Kind != yaml.ScalarNode {
			continue
		}
		imp := c.importerOf(ref.Value)
		if imp == nil {
			continue
		}
		field := "root.dag.tasks." + k.Value
		ri, ok := c.rootImport(k, values[i], field, ref.Value, imp)
		if !ok {
			continue
		}
		for _, o := range out {
			if o.param == ri.param && o.typ != ri.typ {
				c.errorf(k, field, "importers of types %s and %s import root input parameter %q: pipectl's artifact param has one type", o.typ, ri.typ, ri.param)
				ok = false
			}
			if o.param == ri.param && o.metaJSON != ri.metaJSON {
				c.errorf(k, field, "importers with different metadata import root input parameter %q: pipectl's artifact param has one metadata", ri.param)
				ok = false
			}
		}
		if ok {
			out[k.Value] = ri
		}
	}
	return out
}

// rootImport reads one importer task (key, t) of component comp, whose
// executor's importer is imp.
func (c *conv) rootImport(key, t *yaml.Node, field, comp string, imp *yaml.Node) (rootImport, bool) {
	tf := c.fieldsOf(t, field, "an importer task", []string{"componentRef", "inputs", "cachingOptions", "taskInfo", "dependentTasks"}, nil)
	ef := "deploymentSpec.executors." + c.executorOf(comp) + ".importer"
	e := c.fieldsOf(imp, ef, "an importer", []string{"artifactUri", "typeSchema", "metadata", "reimport"}, map[string]string{
		"downloadToWorkspace": " (into a workspace: pipectl has no volumes; the steps reading the artifact fetch it from the artifact store)",
	})
	ri, ok := c.importURI(key, t, tf, field, imp, e, ef)
	return ri, c.importerMetadata(&ri, e["metadata"], tf["inputs"], field, ef, "") && ok
}

// importMetadata converts the metadata m (field mf) of an importer whose
// task's inputs are inputs (field inf) into the artifact param's
// metadata: a copy whose strings have each KFP placeholder
// {{$.inputs.parameters['NAME']}} replaced by what the task gives NAME,
// {{params.P}} for a pipeline input P, the text of a constant (a list or
// struct as JSON), as KFP's local runner fills them in.
func (c *conv) importMetadata(m, inputs *yaml.Node, inf, mf, dag string) (*yaml.Node, bool) {
	if m.Kind != yaml.MappingNode {
		c.errorf(m, mf, "expected a struct (the artifact's metadata)")
		return nil, false
	}
	ok := true
	c.metaInputs = map[string]metaInput{}
	defer func() { c.metaInputs = nil }()
	var conv func(n *yaml.Node, field string) *yaml.Node
	conv = func(n *yaml.Node, field string) *yaml.Node {
		n = yamlfile.Deref(n)
		c.at(n, field)
		cp := *n
		cp.Content = nil
		cp.Anchor = ""
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "{{") {
			v, vok := c.metadataText(n, inputs, inf, field, dag)
			cp.Value, cp.Style = v, 0
			ok = ok && vok
		}
		for i, e := range n.Content {
			f := field
			if n.Kind == yaml.MappingNode && i%2 == 1 {
				f = join(field, n.Content[i-1].Value)
			} else if n.Kind == yaml.SequenceNode {
				f = fmt.Sprintf("%s[%d]", field, i)
			}
			cp.Content = append(cp.Content, conv(e, f))
		}
		return &cp
	}
	out := conv(m, mf)
	return out, ok
}

// metaInput is what an importer task's input gives its metadata's
// placeholders (metadataInput), kept so that an error is reported once.
type metaInput struct {
	text string
	ok   bool
}

// metadataText is the text of n, a string of an importer's metadata
// (field), with its KFP placeholders replaced (importMetadata).
func (c *conv) metadataText(n, inputs *yaml.Node, inf, field, dag string) (string, bool) {
	var b strings.Builder
	rest := n.Value
	for {
		loc := placeholderRE().FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(rest[:loc[0]])
		body := rest[loc[2]:loc[3]]
		rest = rest[loc[1]:]
		m := inParamRE().FindStringSubmatch(body)
		if m == nil {
			c.errorf(n, field, "placeholder {{$%s}} in importer metadata is not supported (supported: {{$.inputs.parameters['NAME']}} of an input of the importer task)", body)
			return "", false
		}
		in, _, found := yamlfile.Lookup(inputs, "parameters", m[1])
		inField := inf + ".parameters." + m[1]
		if !found {
			c.errorf(n, field, "placeholder {{$%s}}: the importer task has no input parameter %q (%s)", body, m[1], inf+".parameters")
			return "", false
		}
		mi, seen := c.metaInputs[m[1]]
		if !seen {
			mi.text, mi.ok = c.metadataInput(in, inField, dag)
			c.metaInputs[m[1]] = mi
		}
		text, ok := mi.text, mi.ok
		if !ok {
			return "", false
		}
		b.WriteString(text)
	}
	if strings.Contains(rest, "{{") {
		c.errorf(n, field, "importer metadata holding {{ outside a KFP placeholder is not supported (pipectl would read it as a reference)")
		return "", false
	}
	b.WriteString(rest)
	return b.String(), true
}

// metadataInput is the text an importer task's input parameter in (field)
// gives a placeholder of its metadata: {{params.P}} for a pipeline input,
// a constant's text.
func (c *conv) metadataInput(in *yaml.Node, field, dag string) (string, bool) {
	if v, _, ok := yamlfile.Lookup(in, "runtimeValue", "constant"); ok {
		switch {
		case v.Kind == yaml.ScalarNode && strings.Contains(v.Value, "{{"):
			c.errorf(v, field+".runtimeValue.constant", "a constant holding {{ given to importer metadata is not supported")
			return "", false
		case v.Kind == yaml.ScalarNode:
			return v.Value, true
		}
		js, err := components.NodeValue(components.TypeJSON, v)
		if err != nil {
			c.errorf(v, field+".runtimeValue.constant", "expected a JSON value: %v", err)
			return "", false
		}
		return js, true
	}
	if o, _, ok := yamlfile.Lookup(in, "taskOutputParameter"); ok {
		return c.metadataOutput(o, field+".taskOutputParameter", dag)
	}
	p, _, ok := yamlfile.Lookup(in, "componentInputParameter")
	if !ok || p.Kind != yaml.ScalarNode {
		c.errorf(in, field, "expected a pipeline input (componentInputParameter), a task's output parameter (taskOutputParameter) or a constant (runtimeValue.constant), given to importer metadata")
		return "", false
	}
	if dag != "" {
		// An input of the sub-DAG: the root input parameter it comes from.
		roots, ok := c.rootInputs(dag, p.Value, p, field+".componentInputParameter", nil, 0)
		if !ok {
			return "", false
		}
		if len(roots) != 1 {
			c.errorf(p, field+".componentInputParameter", "input %q of %s, given to importer metadata, comes from root input parameters %s: pipectl's artifact param has one metadata", p.Value, dag, strings.Join(roots, ", "))
			return "", false
		}
		return "{{params." + roots[0] + "}}", true
	}
	if _, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", p.Value); !ok {
		c.errorf(p, field+".componentInputParameter", "unknown root input parameter %q", p.Value)
		return "", false
	}
	return "{{params." + p.Value + "}}", true
}

// metadataOutput is the text a task's output parameter (o, at field),
// given to the metadata of an importer of the root DAG, puts in the
// artifact param's metadata: the reference to that output (outputRef),
// filled in when a step reading the param starts, which waits for that
// task, as KFP's importer task runs after it. An importer inside a sub-DAG
// is refused: its artifact param is the root's, whose metadata cannot name
// a task of the sub-DAG.
func (c *conv) metadataOutput(o *yaml.Node, field, dag string) (string, bool) {
	if dag != "" {
		c.errorf(o, field, "importer metadata given by a task output inside a sub-DAG (%s) is not supported: pipectl's importer there is an artifact param of the root, whose metadata may name the root's tasks only", dag)
		return "", false
	}
	if task, _, ok := yamlfile.Lookup(o, "producerTask"); ok && task.Kind == yaml.ScalarNode {
		if t, _, ok := yamlfile.Lookup(c.rootTasks, task.Value); ok && c.isImporter(t) {
			c.errorf(task, field+".producerTask", "task %q is an importer: its output is an artifact, not a parameter", task.Value)
			return "", false
		}
	}
	// The root's tasks, as the steps read them (a ParallelFor's outputs
	// collected: refused where the pipeline is checked).
	saved, savedNames := c.dagTasks, c.names
	c.dagTasks, c.names = c.rootTasks, c.loopNames(c.rootTasks, "")
	defer func() { c.dagTasks, c.names = saved, savedNames }()
	return c.taskOutputParameter(o, field)
}

// importOf returns the import importer task (name, t) of the DAG being
// converted is, when it is mapped as one: nil for one in error (reported).
// An importer not mapped (one in a ParallelFor body) is refused where its
// task is converted.
func (c *conv) importOf(name string, t *yaml.Node) (*rootImport, bool) {
	if t == nil || !c.isImporter(t) {
		return nil, false
	}
	if c.dagTasks == c.rootTasks {
		ri, ok := c.imports[name]
		if !ok {
			return nil, true
		}
		return &ri, true
	}
	ri, ok := c.subImports[c.dagTasks][name]
	return ri, ok
}

// importRef is the reference to output key of importer task ri.
func (c *conv) importRef(ri *rootImport, task, key string, artifact bool, at *yaml.Node, field string) (string, bool) {
	if ri == nil {
		return "", false // its error is reported
	}
	if !artifact {
		c.errorf(at, field, "importer task %q has output artifact %q only", task, key)
		return "", false
	}
	return "{{params." + ri.param + "}}", true
}

// taskUse is a task running a component: the component whose dag holds
// it ("" for the root), its name and node.
type taskUse struct {
	dag  string
	key  *yaml.Node
	task *yaml.Node
}

// uses are the tasks of the file running KFP component comp.
func (c *conv) uses(comp string) []taskUse {
	var out []taskUse
	add := func(dag string, tasks *yaml.Node) {
		keys, values := yamlfile.Pairs(tasks)
		for i, k := range keys {
			if bodyOf(values[i]) == comp {
				out = append(out, taskUse{dag, k, values[i]})
			}
		}
	}
	add("", c.rootTasks)
	ck, cv := yamlfile.Pairs(c.comps)
	for i, k := range ck {
		if tasks, _, ok := yamlfile.Lookup(cv[i], "dag", "tasks"); ok {
			add(k.Value, tasks)
		}
	}
	return out
}

// maxDAGDepth bounds the sub-DAGs followed up to the root.
const maxDAGDepth = 100

// inLoop reports whether sub-DAG comp is (or is inside) a ParallelFor body.
func (c *conv) inLoop(comp string, depth int) bool {
	if depth > maxDAGDepth {
		return true
	}
	for _, u := range c.uses(comp) {
		_, _, art := yamlfile.Lookup(u.task, "artifactIterator")
		if isLoop(u.task) || art || u.dag != "" && c.inLoop(u.dag, depth+1) {
			return true
		}
	}
	return false
}

// rootInputs traces input parameter name of sub-DAG comp up to the root
// input parameters the tasks running comp give it from (at, field: where
// the importer reads it), adding each sub-DAG input on the way to chain
// when it is not nil.
func (c *conv) rootInputs(comp, name string, at *yaml.Node, field string, chain *[][2]string, depth int) ([]string, bool) {
	if depth > maxDAGDepth {
		c.errorf(at, field, "input %q of %s: sub-DAGs nested deeper than %d", name, comp, maxDAGDepth)
		return nil, false
	}
	if chain != nil {
		*chain = append(*chain, [2]string{comp, name})
	}
	var roots []string
	for _, u := range c.uses(comp) {
		tf := "root.dag.tasks." + u.key.Value
		if u.dag != "" {
			tf = "components." + u.dag + ".dag.tasks." + u.key.Value
		}
		in, _, _ := yamlfile.Lookup(u.task, "inputs", "parameters", name)
		p, _, ok := yamlfile.Lookup(in, "componentInputParameter")
		if !ok || p.Kind != yaml.ScalarNode {
			c.errorf(at, field, "input %q of %s is given by task %s (%s.inputs.parameters.%s) as a constant or a task output: an importer inside a sub-DAG is supported when its URI is a root input parameter passed down", name, comp, u.key.Value, tf, name)
			return nil, false
		}
		if u.dag != "" {
			up, ok := c.rootInputs(u.dag, p.Value, at, field, chain, depth+1)
			if !ok {
				return nil, false
			}
			roots = append(roots, up...)
			continue
		}
		if _, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", p.Value); !ok {
			c.errorf(p, tf+".inputs.parameters."+name+".componentInputParameter", "unknown root input parameter %q", p.Value)
			return nil, false
		}
		roots = append(roots, p.Value)
	}
	slices.Sort(roots)
	return slices.Compact(roots), true
}

// scanSubImports maps the importer tasks of sub-DAGs (a dsl.importer in a
// dsl.Condition, dsl.ExitHandler or pipeline, not in a ParallelFor body)
// whose URI is an input of their sub-DAG passed down from root input
// parameters: that input is an artifact param of the sub-DAG (and of each
// sub-DAG passing it down), each root input parameter an artifact param
// of the root, with the importer's type and metadata.
func (c *conv) scanSubImports() {
	c.subImports = map[*yaml.Node]map[string]*rootImport{}
	c.importedIn = map[string]map[string]string{}
	ck, cv := yamlfile.Pairs(c.comps)
	for j, ckey := range ck {
		tasks, _, ok := yamlfile.Lookup(cv[j], "dag", "tasks")
		if !ok {
			continue
		}
		keys, values := yamlfile.Pairs(tasks)
		for i, k := range keys {
			comp := bodyOf(values[i])
			imp := c.importerOf(comp)
			if imp == nil || c.inLoop(ckey.Value, 0) {
				continue
			}
			if c.subImports[tasks] == nil {
				c.subImports[tasks] = map[string]*rootImport{}
			}
			field := "components." + ckey.Value + ".dag.tasks." + k.Value
			ri, ok := c.subImport(ckey.Value, k, values[i], field, comp, imp)
			for _, r := range ri.roots {
				for _, o := range c.imports {
					if o.param == r && o.typ != ri.typ {
						c.errorf(k, field, "importers of types %s and %s import root input parameter %q: pipectl's artifact param has one type", o.typ, ri.typ, r)
						ok = false
					}
					if o.param == r && o.metaJSON != ri.metaJSON {
						c.errorf(k, field, "importers with different metadata import root input parameter %q: pipectl's artifact param has one metadata", r)
						ok = false
					}
				}
			}
			for _, in := range ri.chain {
				if t := c.importedIn[in[0]][in[1]]; t != "" && t != ri.typ {
					c.errorf(k, field, "importers of types %s and %s import input %q of %s: pipectl's artifact param has one type", t, ri.typ, in[1], in[0])
					ok = false
				}
			}
			if !ok {
				c.subImports[tasks][k.Value] = nil
				continue
			}
			c.subImports[tasks][k.Value] = &ri
			for _, r := range ri.roots {
				c.imports[field+"@"+r] = rootImport{param: r, typ: ri.typ, at: k, meta: ri.meta, metaJSON: ri.metaJSON}
			}
			for _, in := range ri.chain {
				if c.importedIn[in[0]] == nil {
					c.importedIn[in[0]] = map[string]string{}
				}
				c.importedIn[in[0]][in[1]] = ri.typ
			}
		}
	}
}

// subImport reads importer task (key, t) of sub-DAG dag, whose component
// comp's executor's importer is imp.
func (c *conv) subImport(dag string, key, t *yaml.Node, field, comp string, imp *yaml.Node) (rootImport, bool) {
	tf := c.fieldsOf(t, field, "an importer task", []string{"componentRef", "inputs", "cachingOptions", "taskInfo", "dependentTasks"}, nil)
	ef := "deploymentSpec.executors." + c.executorOf(comp) + ".importer"
	e := c.fieldsOf(imp, ef, "an importer", []string{"artifactUri", "typeSchema", "metadata", "reimport"}, map[string]string{
		"downloadToWorkspace": " (into a workspace: pipectl has no volumes; the steps reading the artifact fetch it from the artifact store)",
	})
	ri, ok := c.importURI(key, t, tf, field, imp, e, ef)
	if !ok {
		return ri, false
	}
	if ri.def != nil {
		c.errorf(ri.def, ef+".artifactUri", "an importer with a constant URI inside a sub-DAG is not supported yet: pipectl imports it as an artifact param of the root; give the URI as a pipeline input passed down")
		return ri, false
	}
	return ri, c.importerMetadata(&ri, e["metadata"], tf["inputs"], field, ef, dag) && ok
}

// importerMetadata sets ri's metadata from the importer's metadata node m
// (nil: none), whose placeholders read the task's inputs (field.inputs)
// in dag ("" the root); it reports whether m converts.
func (c *conv) importerMetadata(ri *rootImport, m, inputs *yaml.Node, field, ef, dag string) bool {
	if m == nil || components.IsNull(m) {
		return true
	}
	meta, ok := c.importMetadata(m, inputs, field+".inputs", ef+".metadata", dag)
	if ok && len(meta.Content) > 0 {
		js, err := components.NodeValue(components.TypeJSON, meta)
		if err != nil {
			c.errorf(m, ef+".metadata", "expected the artifact's metadata as JSON: %v", err)
			return false
		}
		ri.meta, ri.metaJSON = meta, js
	}
	return ok
}

// importURI reads the type and URI of importer task (key, t) whose
// fields are tf and whose executor's importer, imp, has fields e.
func (c *conv) importURI(key, t *yaml.Node, tf map[string]*yaml.Node, field string, imp *yaml.Node, e map[string]*yaml.Node, ef string) (rootImport, bool) {
	ts := c.fieldsOf(e["typeSchema"], ef+".typeSchema", "a typeSchema", []string{"schemaTitle", "schemaVersion"}, nil)
	title, ok := c.scalarOf(ts["schemaTitle"], ef+".typeSchema.schemaTitle", "a schemaTitle such as system.Dataset")
	if !ok {
		if ts["schemaTitle"] == nil {
			c.errorf(imp, ef, "missing: typeSchema.schemaTitle")
		}
		return rootImport{}, false
	}
	ri := rootImport{typ: artifactType(title), at: key}
	u := c.fieldsOf(e["artifactUri"], ef+".artifactUri", "an artifactUri", []string{"constant", "runtimeParameter"}, nil)
	var uri *yaml.Node
	uriField := ef + ".artifactUri.constant"
	switch {
	case u["constant"] != nil:
		uri = u["constant"]
	case u["runtimeParameter"] != nil:
		name, ok := c.scalarOf(u["runtimeParameter"], ef+".artifactUri.runtimeParameter", "an input parameter name")
		if !ok {
			return rootImport{}, false
		}
		in, _, found := yamlfile.Lookup(tf["inputs"], "parameters", name)
		inField := field + ".inputs.parameters." + name
		if !found {
			c.errorf(key, field+".inputs", "missing: input parameter %q, the importer's URI (%s.artifactUri.runtimeParameter)", name, ef)
			return rootImport{}, false
		}
		if v, _, ok := yamlfile.Lookup(in, "runtimeValue", "constant"); ok {
			uri, uriField = v, inField+".runtimeValue.constant"
			break
		}
		p, _, ok := yamlfile.Lookup(in, "componentInputParameter")
		if !ok || p.Kind != yaml.ScalarNode {
			c.errorf(in, inField, "an importer's URI given by a task output is not supported yet: pipectl imports a pipeline input (a root input parameter or a constant), the URI of an artifact in the artifact store")
			return rootImport{}, false
		}
		roots := []string{p.Value}
		if dag := strings.TrimPrefix(field, "components."); dag != field {
			// In a sub-DAG: the root input parameters passed down.
			dag = strings.TrimSuffix(dag, ".dag.tasks."+key.Value)
			if roots, ok = c.rootInputs(dag, p.Value, p, inField+".componentInputParameter", &ri.chain, 0); !ok {
				return rootImport{}, false
			}
			ri.roots = roots
		}
		for _, r := range roots {
			if typ, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", r, "parameterType"); !ok || typ.Value != "STRING" {
				c.errorf(p, inField+".componentInputParameter", "expected a root input parameter of type STRING, the importer's URI (%s)", r)
				return rootImport{}, false
			}
			if d, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", r, "defaultValue"); ok && !components.IsNull(d) {
				c.checkImportURI(d, "root.inputDefinitions.parameters."+r+".defaultValue")
			}
		}
		ri.param = p.Value
		return ri, true
	default:
		c.errorf(imp, ef, "missing: artifactUri (constant or runtimeParameter)")
		return rootImport{}, false
	}
	if !c.checkImportURI(uri, uriField) {
		return rootImport{}, false
	}
	if strings.HasPrefix(field, "components.") {
		ri.def = uri // in a sub-DAG: refused by subImport
		return ri, true
	}
	if want := components.ValidIdent(key.Value); want != "" {
		c.errorf(key, field, "importer task %q with a constant URI is an artifact param named after it: expected %s", key.Value, want)
		return rootImport{}, false
	}
	if _, _, clash := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", key.Value); clash {
		c.errorf(key, field, "importer task %q with a constant URI is an artifact param named after it, and the pipeline has an input parameter %q", key.Value, key.Value)
		return rootImport{}, false
	}
	ri.param, ri.def = key.Value, uri
	return ri, true
}

// checkImportURI checks that n, an importer's URI, names an artifact
// pipectl can read: one of its artifact store, or an object the run
// imports into it (gs://, s3://).
func (c *conv) checkImportURI(n *yaml.Node, field string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		c.errorf(n, field, "expected an importer's URI (a string)")
		return false
	}
	if uris.CheckArtifactOrImportURI(n.Value) != nil {
		c.errorf(n, field, "KFP importer URI %q is not supported: pipectl imports an artifact of its artifact store (%s…, such as an output of an earlier run: pipectl artifacts ls RUN), or an object of Cloud Storage or S3 (gs://BUCKET/KEY, s3://BUCKET/KEY) or a ModelCar's model (oci://IMAGE) that the run copies into its store first; each task reading it fetches it and checks its sha256", n.Value, strings.Join(uris.URISchemes, "… or "))
		return false
	}
	return true
}

// importParam is the artifact param that root input parameter name is, when
// it is a root importer's URI.
func (c *conv) importParam(name string) (rootImport, bool) {
	for _, ri := range c.imports {
		if ri.def == nil && ri.param == name {
			return ri, true
		}
	}
	return rootImport{}, false
}

// isImporter reports whether task node t runs an importer.
func (c *conv) isImporter(t *yaml.Node) bool {
	ref, _, ok := yamlfile.Lookup(t, "componentRef", "name")
	return ok && ref.Kind == yaml.ScalarNode && c.importerOf(ref.Value) != nil
}

// importParams adds to params, the root pipeline's, the artifact params
// of the root importers with a constant URI, in their tasks' order.
func (c *conv) importParams(params *yaml.Node) {
	keys, _ := yamlfile.Pairs(c.rootTasks)
	for _, k := range keys {
		ri, ok := c.imports[k.Value]
		if !ok || ri.def == nil {
			continue
		}
		field := "root.dag.tasks." + k.Value
		prm := c.mapping(ri.at, field, c.str("type", ri.at, field), c.str(ri.typ, ri.at, field),
			c.str("default", ri.def, field), ri.def)
		if ri.meta != nil {
			c.add(prm, "metadata", ri.meta, field, ri.meta)
		}
		c.add(params, ri.param, ri.at, field, prm)
	}
}
