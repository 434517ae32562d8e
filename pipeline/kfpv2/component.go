package kfpv2

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// ioDef is one input or output definition.
type ioDef struct {
	name, field string
	key         *yaml.Node
	// typ is pipectl's type; artifact true for an artifact.
	typ      string
	artifact bool
	def      *yaml.Node
	optional bool
	desc     string
}

// paramTypes are KFP's parameterType values as pipectl's types.
var paramTypes = map[string]string{
	"STRING":         components.TypeString,
	"NUMBER_INTEGER": components.TypeInt,
	"NUMBER_DOUBLE":  components.TypeFloat,
	"BOOLEAN":        components.TypeBool,
	"LIST":           components.TypeJSON,
	"STRUCT":         components.TypeJSON,
}

// artifactType is pipectl's type for a KFP schemaTitle.
func artifactType(title string) string {
	switch title {
	case "system.Dataset":
		return components.TypeDataset
	case "system.Model":
		return components.TypeModel
	case "system.Metrics":
		return components.TypeMetrics
	}
	return components.TypeArtifact
}

// inputDefs reads inputDefinitions (inputs true) or outputDefinitions.
func (c *conv) inputDefs(n *yaml.Node, field string, inputs bool) []ioDef {
	var out []ioDef
	fs := c.fieldsOf(n, field, "definitions", []string{"parameters", "artifacts"}, nil)
	pk, pv := yamlfile.Pairs(fs["parameters"])
	pAllowed := []string{"parameterType", "description"}
	if inputs {
		pAllowed = append(pAllowed, "defaultValue", "isOptional")
	}
	for i, k := range pk {
		f := join(field, "parameters."+k.Value)
		d := c.fieldsOf(pv[i], f, "a parameter definition", pAllowed, nil)
		t, ok := c.scalarOf(d["parameterType"], f+".parameterType", "a parameterType")
		if !ok {
			if d["parameterType"] == nil {
				c.errorf(k, f, "missing: parameterType")
			}
			continue
		}
		typ, known := paramTypes[t]
		optional := d["isOptional"] != nil && d["isOptional"].Value == "true"
		// A component compiled as a pipeline (GH-12033) has its optional
		// PipelineTaskFinalStatus input as an optional pipeline input: a
		// json param (without a default, as every optional pipeline input
		// without one, a run gives it: -p status='{"state": ...}').
		if t == "TASK_FINAL_STATUS" && inputs && (!c.atRootDefs || optional) {
			typ, known = components.TypeJSON, true
		}
		if !known {
			if t == "TASK_FINAL_STATUS" {
				c.errorf(d["parameterType"], f+".parameterType", "KFP parameterType TASK_FINAL_STATUS (dsl.PipelineTaskFinalStatus) is the input of a component, or an optional pipeline input (isOptional: true, a json param)")
			} else {
				c.errorf(d["parameterType"], f+".parameterType", "unknown parameterType %q (expected STRING, NUMBER_INTEGER, NUMBER_DOUBLE, BOOLEAN, LIST or STRUCT)", t)
			}
			continue
		}
		io := ioDef{name: k.Value, field: f, key: k, typ: typ, def: d["defaultValue"]}
		if o := d["isOptional"]; o != nil {
			io.optional = o.Value == "true"
		}
		if ds := d["description"]; ds != nil {
			io.desc = ds.Value
		}
		if io.def != nil && components.IsNull(io.def) {
			io.def = nil
		}
		if t == "NUMBER_INTEGER" {
			io.def = wholeNumber(io.def)
		}
		out = append(out, io)
	}
	ak, av := yamlfile.Pairs(fs["artifacts"])
	aAllowed := []string{"artifactType", "description", "isArtifactList"}
	if inputs {
		aAllowed = append(aAllowed, "isOptional")
	}
	for i, k := range ak {
		f := join(field, "artifacts."+k.Value)
		d := c.fieldsOf(av[i], f, "an artifact definition", aAllowed, nil)
		at := c.fieldsOf(d["artifactType"], f+".artifactType", "an artifactType", []string{"schemaTitle", "schemaVersion"}, nil)
		title, ok := c.scalarOf(at["schemaTitle"], f+".artifactType.schemaTitle", "a schemaTitle such as system.Dataset")
		if !ok {
			if d["artifactType"] == nil {
				c.errorf(k, f, "missing: artifactType")
			}
			continue
		}
		// An input list of artifacts (List[Artifact]) is an artifact
		// input that a loop step's collected artifacts give (a directory
		// of the iterations' artifacts; {{$}} lists them). A component's
		// output list has no pipectl mapping: a step's output is one
		// artifact.
		if l := d["isArtifactList"]; l != nil && l.Value == "true" && !inputs {
			c.errorf(l, f+".isArtifactList", "a component's output list of artifacts (isArtifactList, List[Artifact] returned) is not supported yet: a pipectl step's output is one artifact")
			continue
		}
		io := ioDef{name: k.Value, field: f, key: k, typ: artifactType(title), artifact: true}
		if o := d["isOptional"]; o != nil {
			io.optional = o.Value == "true"
		}
		if ds := d["description"]; ds != nil {
			io.desc = ds.Value
		}
		out = append(out, io)
	}
	return out
}

var dnsUnsafeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) })

// componentName is the name of KFP component comp-NAME: NAME.
func componentName(kfp string) string {
	n := strings.TrimPrefix(kfp, "comp-")
	n = strings.Trim(dnsUnsafeRE().ReplaceAllString(strings.ToLower(n), "-"), "-")
	if len(n) > 63 {
		n = strings.Trim(n[:63], "-")
	}
	if n == "" {
		n = "component"
	}
	return n
}

// component returns the step component of KFP component name (ref is the
// componentRef.name node): an inline component or an inline pipeline.
func (c *conv) component(name string, ref *yaml.Node, field string) *yaml.Node {
	if b, ok := c.built[name]; ok {
		return b
	}
	v, k, ok := yamlfile.Lookup(c.comps, name)
	if c.comps == nil || !ok {
		var names []string
		ks, _ := yamlfile.Pairs(c.comps)
		for _, k := range ks {
			names = append(names, k.Value)
		}
		c.errorf(ref, field, "unknown component %q (components: %s)", name, strings.Join(names, ", "))
		return nil
	}
	if c.active[name] {
		c.errorf(ref, field, "component %q uses itself", name)
		return nil
	}
	c.active[name] = true
	defer delete(c.active, name)
	// A sub-DAG's tasks set atRoot while they are converted: the task
	// using the component is where it was.
	defer func(atRoot bool) { c.atRoot = atRoot }(c.atRoot)
	cf := "components." + name
	c.at(k, cf)
	var out *yaml.Node
	if _, _, isDAG := yamlfile.Lookup(v, "dag"); isDAG {
		meta := c.mapping(k, cf, c.str("name", k, cf), c.str(componentName(name), k, cf))
		out = c.dagPipeline(meta, v, cf, false)
	} else {
		out = c.container(name, k, v, cf)
	}
	c.built[name] = out
	return out
}

// container converts a component run by a container executor.
func (c *conv) container(name string, key, comp *yaml.Node, field string) *yaml.Node {
	fs := c.fieldsOf(comp, field, "a component", []string{"executorLabel", "inputDefinitions", "outputDefinitions"}, nil)
	label, ok := c.scalarOf(fs["executorLabel"], field+".executorLabel", "an executor label")
	if !ok {
		if fs["executorLabel"] == nil {
			c.errorf(key, field, "missing: executorLabel or dag")
		}
		return nil
	}
	ex, exKey, found := yamlfile.Lookup(c.execs, label)
	if c.execs == nil || !found {
		c.errorf(fs["executorLabel"], field+".executorLabel", "no executor %q in deploymentSpec.executors", label)
		return nil
	}
	ef := "deploymentSpec.executors." + label
	c.at(exKey, ef)
	e := c.fieldsOf(ex, ef, "an executor", []string{"container"}, map[string]string{
		"importer": " in a ParallelFor body, or in a sub-DAG run in one: pipectl maps an importer of the root DAG or of a sub-DAG outside ParallelFors, an artifact param",
		"resolver": "",
	})
	cont := e["container"]
	if cont == nil {
		if len(c.errs) == 0 {
			c.errorf(exKey, ef, "missing: container")
		}
		return nil
	}
	cf := ef + ".container"
	cs := c.fieldsOf(cont, cf, "a container", []string{"image", "command", "args", "env", "resources"}, map[string]string{
		"lifecycle": "",
	})
	if r := cs["resources"]; r != nil {
		c.resources(label, r, cf+".resources")
	}
	cv := &compConv{executorInput: func() (string, error) { return ExecutorInputPlaceholder, nil }}
	out := c.mapping(key, field,
		c.str("apiVersion", key, field), c.str(components.APIVersion, key, field),
		c.str("kind", key, field), c.str("Component", key, field),
		c.str("metadata", key, field), c.mapping(key, field, c.str("name", key, field), c.str(componentName(name), key, field)))
	if img, ok := c.scalarOf(cs["image"], cf+".image", "an image"); ok {
		c.add(out, "image", cs["image"], cf+".image", c.str(img, cs["image"], cf+".image"))
	}
	cv.ins = c.inputDefs(fs["inputDefinitions"], field+".inputDefinitions", true)
	cv.outs = c.inputDefs(fs["outputDefinitions"], field+".outputDefinitions", false)
	c.containerIO(out, fs, field, cv.ins, cv.outs)
	c.containerArgv(out, cs, cf, cv)
	c.requireCommand(cont, cs, cf)
	if n := cs["env"]; n != nil {
		c.containerEnv(out, n, cf+".env", cv)
	}
	return out
}

// containerIO adds to component out its inputs and outputs: ins and outs,
// from the component's fields fs (at field).
func (c *conv) containerIO(out *yaml.Node, fs map[string]*yaml.Node, field string, ins, outs []ioDef) {
	if len(ins) > 0 {
		list := c.seq(fs["inputDefinitions"], field+".inputDefinitions")
		for _, in := range ins {
			m := c.mapping(in.key, in.field, c.str("name", in.key, in.field), c.str(in.name, in.key, in.field), c.str("type", in.key, in.field), c.str(in.typ, in.key, in.field))
			if in.def != nil {
				m.Content = append(m.Content, c.str("default", in.def, in.field+".defaultValue"), in.def)
			} else if in.optional {
				c.add(m, "optional", in.key, in.field, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true", Line: in.key.Line, Column: in.key.Column})
			}
			list.Content = append(list.Content, m)
		}
		c.add(out, "inputs", fs["inputDefinitions"], field+".inputDefinitions", list)
	}
	if len(outs) > 0 {
		list := c.seq(fs["outputDefinitions"], field+".outputDefinitions")
		for _, o := range outs {
			list.Content = append(list.Content, c.mapping(o.key, o.field, c.str("name", o.key, o.field), c.str(o.name, o.key, o.field), c.str("type", o.key, o.field), c.str(o.typ, o.key, o.field)))
		}
		c.add(out, "outputs", fs["outputDefinitions"], field+".outputDefinitions", list)
	}
}

// containerArgv adds to component out the container's command and args
// (its fields cs, at cf), their placeholders converted by cv.
func (c *conv) containerArgv(out *yaml.Node, cs map[string]*yaml.Node, cf string, cv *compConv) {
	for _, key := range []string{"command", "args"} {
		n := cs[key]
		if n == nil {
			continue
		}
		kf := cf + "." + key
		if n.Kind != yaml.SequenceNode {
			c.errorf(n, kf, "expected a list of strings")
			continue
		}
		list := c.seq(n, kf)
		for j, el := range n.Content {
			ef := fmt.Sprintf("%s[%d]", kf, j)
			if el.Kind != yaml.ScalarNode {
				c.errorf(el, ef, "expected a string")
				continue
			}
			elems, err := cv.element(el.Value)
			if err != nil {
				c.errorf(el, ef, "%v", err)
				continue
			}
			for _, s := range elems {
				list.Content = append(list.Content, c.str(s, el, ef))
			}
		}
		c.add(out, key, n, kf, list)
	}
}

// requireCommand refuses a container (cont, its fields cs, at cf) without
// a command: pipectl runs the program itself.
func (c *conv) requireCommand(cont *yaml.Node, cs map[string]*yaml.Node, cf string) {
	switch img := cs["image"]; {
	case cs["command"] != nil:
	case img != nil && (img.Value == "argostub/createpvc" || img.Value == "argostub/deletepvc"):
		// kfp-kubernetes' CreatePVC and DeletePVC: KFP's driver does them.
		c.errorf(img, cf+".image", "KFP %s (kubernetes.CreatePVC, DeletePVC) is not supported%s", img.Value, volumeWhy)
	default:
		c.errorf(cont, cf, "missing: command (a container component with args only runs its image's entrypoint; pipectl runs the program itself, locally without an image: write the entrypoint as command)")
	}
}

// containerEnv adds to component out the container's env n (at kf), the
// placeholders of its values converted by cv.
func (c *conv) containerEnv(out, n *yaml.Node, kf string, cv *compConv) {
	list := c.seq(n, kf)
	if n.Kind != yaml.SequenceNode {
		c.errorf(n, kf, "expected a list of {name, value}")
	}
	for j, el := range n.Content {
		ef := fmt.Sprintf("%s[%d]", kf, j)
		kv := c.fieldsOf(el, ef, "an env variable", []string{"name", "value"}, nil)
		name, ok1 := c.scalarOf(kv["name"], ef+".name", "a variable name")
		val := ""
		if kv["value"] != nil {
			val, _ = c.scalarOf(kv["value"], ef+".value", "a string")
		}
		t, err := cv.text(val)
		if err != nil {
			c.errorf(kv["value"], ef+".value", "%v", err)
			continue
		}
		if ok1 {
			list.Content = append(list.Content, c.mapping(el, ef, c.str("name", kv["name"], ef+".name"), c.str(name, kv["name"], ef+".name"), c.str("value", el, ef+".value"), c.str(t, el, ef+".value")))
		}
	}
	c.add(out, "env", n, kf, list)
}
