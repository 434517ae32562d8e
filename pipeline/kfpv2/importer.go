package kfpv2

import (
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// An importer (dsl.importer) is a task whose executor is importer:
// KFP's driver registers the artifact at artifactUri (a constant, or the
// task's input parameter runtimeParameter names) with the type
// typeSchema, and the tasks reading its output read that URI; nothing is
// copied. pipectl's equivalent is an artifact param (see "Nested
// pipelines" in the README): the URI of an artifact in the artifact
// store, which each step reading it fetches and checks by its sha256. So a
// root importer is no step: the tasks reading its output read
//
//   - the root input parameter its URI is (componentInputParameter), made
//     an artifact param of the importer's type, its defaultValue the
//     param's default; the run gives another with -p NAME=URI;
//   - or, for a constant URI, an artifact param named after the task, the
//     constant its default.
//
// A URI no artifact store holds (gs://, oci://, http://, ...) is an error
// at its line, as are an importer in a sub-DAG, one whose URI is a task
// output, metadata (pipectl's executor input gives an input artifact's
// metadata as {}) and downloadToWorkspace. reimport is the same either
// way: the artifact is the store's, read where it is.

// rootImport is the artifact param a root importer task is.
type rootImport struct {
	// param is the root param; typ its artifact type.
	param, typ string
	// def is the default of a param made for a constant URI; nil for a
	// root input parameter.
	def *yaml.Node
	at  *yaml.Node
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
	if m := e["metadata"]; m != nil && len(m.Content) > 0 {
		c.errorf(m, ef+".metadata", "importer metadata is not supported yet: pipectl gives the tasks reading the artifact its metadata as {} in the executor input ({{$}})")
		ok = false
	}
	return ri, ok
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
		if typ, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", p.Value, "parameterType"); !ok || typ.Value != "STRING" {
			c.errorf(p, inField+".componentInputParameter", "expected a root input parameter of type STRING, the importer's URI")
			return rootImport{}, false
		}
		ri.param = p.Value
		if d, _, ok := yamlfile.Lookup(c.f.Root, "root", "inputDefinitions", "parameters", p.Value, "defaultValue"); ok && !components.IsNull(d) {
			c.checkImportURI(d, "root.inputDefinitions.parameters."+p.Value+".defaultValue")
		}
		return ri, true
	default:
		c.errorf(imp, ef, "missing: artifactUri (constant or runtimeParameter)")
		return rootImport{}, false
	}
	if !c.checkImportURI(uri, uriField) {
		return rootImport{}, false
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
// pipectl can read: one of its artifact store.
func (c *conv) checkImportURI(n *yaml.Node, field string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		c.errorf(n, field, "expected an importer's URI (a string)")
		return false
	}
	if artifacts.CheckURI(n.Value) != nil {
		c.errorf(n, field, "KFP importer URI %q is not supported: pipectl imports an artifact of its artifact store, which each task reading it fetches and checks by its sha256 (expected %s…, such as an output of an earlier run: pipectl artifacts ls RUN)", n.Value, strings.Join(artifacts.URISchemes, "… or "))
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
		c.add(params, ri.param, ri.at, field, prm)
	}
}
