package kfpv2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// topKeys are the keys of a KFP v2 pipeline file's first document.
var topKeys = []string{"components", "deploymentSpec", "pipelineInfo", "root", "schemaVersion", "sdkVersion", "defaultPipelineRoot"}

// Is reports whether data's first YAML document is a KFP v2 pipeline: a
// mapping without apiVersion that has pipelineInfo, root, deploymentSpec
// or schemaVersion.
func Is(data []byte) bool {
	var doc struct {
		APIVersion     any `yaml:"apiVersion"`
		PipelineInfo   any `yaml:"pipelineInfo"`
		Root           any `yaml:"root"`
		DeploymentSpec any `yaml:"deploymentSpec"`
		SchemaVersion  any `yaml:"schemaVersion"`
	}
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil {
		return false
	}
	return doc.APIVersion == nil && (doc.PipelineInfo != nil || doc.Root != nil || doc.DeploymentSpec != nil || doc.SchemaVersion != nil)
}

// File is a parsed KFP v2 pipeline file.
type File struct {
	*yamlfile.File
	// Platform is the second document (platforms: ...), or nil.
	Platform *yaml.Node
}

// Parse parses data as a KFP v2 pipeline file named path: one document,
// or two when the second holds the platform specs.
func Parse(path string, data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(path, err)
		}
		n := &doc
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue
		}
		docs = append(docs, n)
	}
	if len(docs) == 0 || docs[0].Kind != yaml.MappingNode {
		return nil, &yamlfile.Error{File: path, Line: 1, Column: 1, Msg: "expected a KFP pipeline: a mapping with pipelineInfo, root, components and deploymentSpec"}
	}
	f := &File{File: &yamlfile.File{Path: path, Root: docs[0]}}
	if len(docs) > 1 {
		p := docs[1]
		if _, _, ok := yamlfile.Lookup(p, "platforms"); !ok || p.Kind != yaml.MappingNode || len(p.Content) != 2 {
			return nil, &yamlfile.Error{File: path, Line: p.Line, Column: p.Column, Msg: "a second YAML document: expected KFP's platform specs (platforms: ...)"}
		}
		f.Platform = p
	}
	if len(docs) > 2 {
		return nil, &yamlfile.Error{File: path, Line: docs[2].Line, Column: docs[2].Column, Msg: "a third YAML document: a KFP pipeline file holds the pipeline and optionally its platform specs"}
	}
	return f, nil
}

var lineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(path string, err error) error {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		return &yamlfile.Error{File: path, Line: line, Column: 1, Msg: m[2]}
	}
	return &yamlfile.Error{File: path, Line: 1, Column: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// Result is a KFP v2 pipeline as a pipectl pipeline.
type Result struct {
	// Root is the pipeline's YAML: every node carries the line and column
	// of the KFP file's node it comes from.
	Root *yaml.Node
	// fields are the KFP field paths of the KFP file's nodes, by position.
	fields map[[2]int]string
}

// Field returns the KFP field path of the node at line and column of the
// KFP file, when the pipeline has a node from there.
func (r *Result) Field(line, col int) (string, bool) {
	f, ok := r.fields[[2]int{line, col}]
	return f, ok
}

// Convert writes the KFP v2 pipeline of f as a pipectl pipeline. Every
// problem it finds is returned, joined, each a *yamlfile.Error.
func Convert(f *File) (*Result, error) {
	c := &conv{f: f.File, fields: map[[2]int]string{}, built: map[string]*yaml.Node{}, active: map[string]bool{}, extra: stepFields{}}
	root := c.pipeline(f)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return &Result{Root: root, fields: c.fields}, nil
}

// conv converts one file.
type conv struct {
	f    *yamlfile.File
	errs []error
	// fields are the KFP field paths of the nodes used, by position.
	fields map[[2]int]string
	// comps and execs are components and deploymentSpec.executors.
	comps, execs *yaml.Node
	// built are the converted components, by name; active those being
	// converted (a component that uses itself is an error).
	built  map[string]*yaml.Node
	active map[string]bool
	// loops are the ParallelFors whose body is being converted, outermost
	// first; loopSteps counts the loop steps made (loop.go).
	loops     []*loopLevel
	loopSteps int
	// atRoot is set while the root DAG's tasks are converted; final is set
	// by task on a task that becomes a finally step.
	atRoot, final bool
	// atRootDefs is set while the root's inputDefinitions are read.
	atRootDefs bool
	// extra are the step fields of the steps running each executor
	// (resources.go); secretEnv its secretAsEnv entries, converted per task.
	extra     stepFields
	secretEnv map[string][]platformEntry
	// runtimeRes are the container resources given at run time (a task
	// input), by executor label, converted per task.
	runtimeRes map[string][]runtimeResource
	// podMeta are the executors' podMetadata, fieldPaths their
	// fieldPathAsEnv (resources.go), by executor label.
	podMeta    map[string]podMeta
	fieldPaths map[string]platformEntry
	// dagTasks are the tasks of the dag being converted; names the steps
	// each of its ParallelFor tasks becomes (loop.go).
	dagTasks *yaml.Node
	names    map[string][]string
	// omitted are the inputs of the sub-DAG being converted that are
	// optional, without a default, and given by no task: left out.
	omitted map[string]bool
	// taskName is the KFP name of the task whose inputs are being
	// converted ({{$.pipeline_task_name}} in a constant).
	taskName string
	// rootTasks are the root DAG's tasks; imports its importer tasks,
	// each an artifact param (importer.go).
	rootTasks *yaml.Node
	imports   map[string]rootImport
	// subImports are the importer tasks of sub-DAGs, by DAG component
	// and task ("COMP/TASK"), each an artifact param of its sub-DAG (nil
	// for one in error); importedIn the sub-DAG inputs that are artifact
	// params for them, their types by component and input; dagComp is the
	// component whose dag is being converted ("" for the root).
	subImports map[*yaml.Node]map[string]*rootImport
	importedIn map[string]map[string]string
	dagComp    string
	// metaInputs are the inputs of the importer whose metadata is being
	// converted, by name (importer.go).
	metaInputs map[string]metaInput
}

func (c *conv) errorf(n *yaml.Node, field, format string, args ...any) {
	c.errs = append(c.errs, c.f.Errorf(n, field, format, args...))
}

// at records that node n of the KFP file is field.
func (c *conv) at(n *yaml.Node, field string) {
	if n == nil {
		return
	}
	k := [2]int{n.Line, n.Column}
	if _, ok := c.fields[k]; !ok {
		c.fields[k] = field
	}
}

// str and mapping make nodes of the pipeline at the position of the KFP
// file's node at, which is field.
func (c *conv) str(value string, at *yaml.Node, field string) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: at.Line, Column: at.Column}
}

func (c *conv) mapping(at *yaml.Node, field string, kv ...*yaml.Node) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv, Line: at.Line, Column: at.Column}
}

func (c *conv) seq(at *yaml.Node, field string) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: at.Line, Column: at.Column}
}

// add appends key: value to mapping m, the key at the position of at.
func (c *conv) add(m *yaml.Node, key string, at *yaml.Node, field string, value *yaml.Node) {
	m.Content = append(m.Content, c.str(key, at, field), value)
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// fieldsOf checks that n is a mapping whose keys are among allowed, and
// returns its values by key. A key in unsupported is KFP's but not run
// by pipectl: an error saying so.
func (c *conv) fieldsOf(n *yaml.Node, field, what string, allowed []string, unsupported map[string]string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	c.at(n, field)
	if n.Kind != yaml.MappingNode {
		c.errorf(n, field, "expected %s (a mapping)", what)
		return out
	}
	keys, values := yamlfile.Pairs(n)
	for i, k := range keys {
		kf := join(field, k.Value)
		c.at(k, kf)
		c.at(values[i], kf)
		if why, ok := unsupported[k.Value]; ok {
			c.errorf(k, kf, "KFP %s is not supported yet%s", k.Value, why)
			continue
		}
		if !slices.Contains(allowed, k.Value) {
			c.errorf(k, kf, "unknown field %q of %s (expected one of: %s)", k.Value, what, strings.Join(allowed, ", "))
			continue
		}
		out[k.Value] = values[i]
	}
	return out
}

// scalarOf returns the value of a scalar node, or reports it.
func (c *conv) scalarOf(n *yaml.Node, field, what string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		c.errorf(n, field, "expected %s", what)
		return "", false
	}
	return n.Value, true
}

func (c *conv) pipeline(f *File) *yaml.Node {
	top := c.fieldsOf(f.Root, "", "a KFP pipeline", topKeys, nil)
	// defaultPipelineRoot is where KFP stores a run's artifacts when the run
	// names no pipeline root. A pipectl run always names its store
	// (--artifacts, PIPECTL_ARTIFACTS, else the local default), as every
	// command reading runs must find it there, so the file's is never used.
	c.scalarOf(top["defaultPipelineRoot"], "defaultPipelineRoot", "a pipeline root URI (text)")
	if v, ok := c.scalarOf(top["schemaVersion"], "schemaVersion", "a schema version such as 2.1.0"); ok && v != "2.1.0" && v != "2.0.0" {
		c.errorf(top["schemaVersion"], "schemaVersion", "expected KFP pipeline schema 2.1.0 or 2.0.0, got %q", v)
	}
	for _, k := range []string{"pipelineInfo", "root", "components", "deploymentSpec"} {
		if top[k] == nil && !slices.ContainsFunc(c.errs, func(error) bool { return false }) {
			if _, _, present := yamlfile.Lookup(f.Root, k); !present {
				c.errorf(f.Root, k, "missing: %s (a KFP pipeline has pipelineInfo, root, components and deploymentSpec)", k)
			}
		}
	}
	if f.Platform != nil {
		c.platform(f.Platform)
		c.fieldEnv()
	}
	c.comps = top["components"]
	if c.comps != nil && c.comps.Kind != yaml.MappingNode {
		c.errorf(c.comps, "components", "expected a mapping of component names to components")
		c.comps = nil
	}
	ds := c.fieldsOf(top["deploymentSpec"], "deploymentSpec", "a deploymentSpec", []string{"executors"}, nil)
	c.execs = ds["executors"]
	info := c.fieldsOf(top["pipelineInfo"], "pipelineInfo", "a pipelineInfo", []string{"name", "description", "displayName"}, nil)
	name, _ := c.scalarOf(info["name"], "pipelineInfo.name", "the pipeline's name")
	at := f.Root
	if info["name"] != nil {
		at = info["name"]
	}
	meta := c.mapping(at, "pipelineInfo", c.str("name", at, "pipelineInfo.name"), c.str(name, at, "pipelineInfo.name"))
	if d := info["description"]; d != nil && d.Kind == yaml.ScalarNode {
		c.add(meta, "description", d, "pipelineInfo.description", c.str(d.Value, d, "pipelineInfo.description"))
	}
	rootNode := top["root"]
	if rootNode == nil {
		return nil
	}
	return c.dagPipeline(meta, rootNode, "root", true)
}

// platform refuses the platform specs pipectl does not map.
func (c *conv) platform(p *yaml.Node) {
	keys, values := yamlfile.Pairs(p)
	for i, k := range keys {
		pk, pv := yamlfile.Pairs(values[i])
		if len(pk) == 0 {
			c.errorf(k, "platforms", "expected platform specs by platform (kubernetes: ...)")
			continue
		}
		for j, name := range pk {
			field := "platforms." + name.Value
			ex, _, _ := yamlfile.Lookup(pv[j], "deploymentSpec", "executors")
			ek, ev := yamlfile.Pairs(ex)
			if len(ek) == 0 {
				c.errorf(name, field, "KFP platform spec %q is not supported", name.Value)
				continue
			}
			for m, e := range ek {
				if name.Value == "kubernetes" {
					c.platformExecutor(e.Value, ev[m], field+".deploymentSpec.executors."+e.Value)
					continue
				}
				fk, _ := yamlfile.Pairs(ev[m])
				for _, f := range fk {
					c.errorf(f, field+".deploymentSpec.executors."+e.Value+"."+f.Value, "KFP %s platform spec %q is not supported yet (executor %s)", name.Value, f.Value, e.Value)
				}
			}
		}
	}
}

// dagPipeline converts a component with a dag (the root: root true) into a
// pipeline: its inputDefinitions the params, its tasks the steps, its dag
// outputs the outputs.
func (c *conv) dagPipeline(meta, comp *yaml.Node, field string, root bool) *yaml.Node {
	fs := c.fieldsOf(comp, field, "a component", []string{"dag", "inputDefinitions", "outputDefinitions", "executorLabel"}, nil)
	out := c.mapping(comp, field,
		c.str("apiVersion", comp, field), c.str(components.APIVersion, comp, field),
		c.str("kind", comp, field), c.str("Pipeline", comp, field),
		c.str("metadata", comp, field), meta)
	params := c.mapping(comp, join(field, "inputDefinitions"))
	if root {
		c.rootTasks, _, _ = yamlfile.Lookup(comp, "dag", "tasks")
		c.imports = c.rootImports(c.rootTasks)
		c.scanSubImports()
	}
	dagComp := strings.TrimPrefix(field, "components.")
	if root {
		dagComp = ""
	}
	c.atRootDefs = root
	ins := c.inputDefs(fs["inputDefinitions"], join(field, "inputDefinitions"), true)
	c.atRootDefs = false
	savedOmitted := c.omitted
	c.omitted = map[string]bool{}
	defer func() { c.omitted = savedOmitted }()
	for _, in := range ins {
		// A pipeline input artifact is an artifact param: the run gives
		// the URI of an artifact in the store (-p NAME=URI).
		// A sub-DAG's optional input without a default that no task
		// gives is None to KFP: the tasks reading it get no value.
		if !root && in.optional && in.def == nil && !c.given(strings.TrimPrefix(field, "components."), in.name, in.artifact) {
			c.omitted[in.name] = true
			continue
		}
		ri, imported := c.importParam(in.name)
		if root && imported {
			in.typ = ri.typ
		}
		if typ, ok := c.importedIn[dagComp][in.name]; !root && ok {
			in.typ = typ // an importer's URI in the sub-DAG (importer.go)
		}
		prm := c.mapping(in.key, in.field, c.str("type", in.key, in.field), c.str(in.typ, in.key, in.field))
		if in.def != nil {
			prm.Content = append(prm.Content, c.str("default", in.def, in.field+".defaultValue"), in.def)
		}
		if root && imported && ri.meta != nil {
			c.add(prm, "metadata", ri.meta, in.field, ri.meta)
		}
		if in.desc != "" {
			c.add(prm, "description", in.key, in.field, c.str(in.desc, in.key, in.field))
		}
		c.add(params, in.name, in.key, in.field, prm)
	}
	if root {
		c.importParams(params)
	}
	c.add(out, "params", comp, field, params)
	dag := c.fieldsOf(fs["dag"], join(field, "dag"), "a dag", []string{"tasks", "outputs"}, nil)
	if fs["dag"] == nil {
		c.errorf(comp, join(field, "dag"), "missing: dag (the pipeline's tasks)")
		return out
	}
	steps := c.seq(fs["dag"], join(field, "dag.tasks"))
	finally := c.seq(fs["dag"], join(field, "dag.tasks"))
	tk, tv := yamlfile.Pairs(dag["tasks"])
	saved, savedNames, savedComp := c.dagTasks, c.names, c.dagComp
	c.dagTasks, c.names, c.dagComp = dag["tasks"], c.loopNames(dag["tasks"], ""), dagComp
	defer func() { c.dagTasks, c.names, c.dagComp = saved, savedNames, savedComp }()
	noStep := map[string]bool{}
	for i, k := range tk {
		if _, mapped := c.importOf(k.Value, tv[i]); mapped {
			// No step: its output is an artifact param (importer.go).
			c.names[k.Value] = []string{}
			noStep[k.Value] = true
		}
	}
	for i, k := range tk {
		c.atRoot, c.final = root, false
		tf := join(field, "dag.tasks."+k.Value)
		var s *yaml.Node
		switch {
		case noStep[k.Value]:
			continue
		case isLoop(tv[i]):
			steps.Content = append(steps.Content, c.loopTask(k, tv[i], tf, "")...)
		default:
			s = c.task(k, tv[i], tf)
		}
		switch {
		case s == nil:
		case c.final:
			finally.Content = append(finally.Content, s)
		default:
			steps.Content = append(steps.Content, s)
		}
		c.atRoot, c.final = false, false
	}
	if len(finally.Content) > 0 {
		c.add(out, "finally", fs["dag"], join(field, "dag.tasks"), finally)
	}
	if len(tk) == 0 {
		c.errorf(fs["dag"], join(field, "dag.tasks"), "missing: tasks")
	}
	c.add(out, "steps", fs["dag"], join(field, "dag.tasks"), steps)
	if o := dag["outputs"]; o != nil {
		c.add(out, "outputs", o, join(field, "dag.outputs"), c.dagOutputs(o, join(field, "dag.outputs")))
	}
	return out
}

// dagOutputs converts dag.outputs into the pipeline's outputs.
func (c *conv) dagOutputs(n *yaml.Node, field string) *yaml.Node {
	out := c.mapping(n, field)
	fs := c.fieldsOf(n, field, "dag outputs", []string{"parameters", "artifacts"}, nil)
	pk, pv := yamlfile.Pairs(fs["parameters"])
	for i, k := range pk {
		f := join(field, "parameters."+k.Value)
		sel := c.fieldsOf(pv[i], f, "a dag output parameter", []string{"valueFromParameter", "valueFromOneof"}, nil)
		if o := sel["valueFromOneof"]; o != nil {
			of := c.fieldsOf(o, f+".valueFromOneof", "a valueFromOneof", []string{"parameterSelectors"}, nil)
			if n := c.oneOf(of["parameterSelectors"], f+".valueFromOneof.parameterSelectors", "outputParameterKey", false); n != nil {
				c.add(out, k.Value, k, f, n)
			}
			continue
		}
		v := c.fieldsOf(sel["valueFromParameter"], f+".valueFromParameter", "valueFromParameter", []string{"producerSubtask", "outputParameterKey"}, nil)
		task, ok1 := c.scalarOf(v["producerSubtask"], f+".valueFromParameter.producerSubtask", "a task name")
		key, ok2 := c.scalarOf(v["outputParameterKey"], f+".valueFromParameter.outputParameterKey", "an output name")
		if ok1 && ok2 {
			if ref, ok := c.outputRef(task, key, v["producerSubtask"], f+".valueFromParameter"); ok {
				c.add(out, k.Value, k, f, c.str(ref, sel["valueFromParameter"], f+".valueFromParameter"))
			}
		}
	}
	ak, av := yamlfile.Pairs(fs["artifacts"])
	for i, k := range ak {
		f := join(field, "artifacts."+k.Value)
		sel := c.fieldsOf(av[i], f, "a dag output artifact", []string{"artifactSelectors"}, nil)
		s := sel["artifactSelectors"]
		if s != nil && s.Kind == yaml.SequenceNode && len(s.Content) > 1 {
			// dsl.OneOf of artifacts.
			if n := c.oneOf(s, f+".artifactSelectors", "outputArtifactKey", true); n != nil {
				c.add(out, k.Value, k, f, n)
			}
			continue
		}
		if s == nil || s.Kind != yaml.SequenceNode || len(s.Content) != 1 {
			if s != nil {
				c.errorf(s, f+".artifactSelectors", "expected a list of artifact selectors")
			}
			continue
		}
		v := c.fieldsOf(s.Content[0], f+".artifactSelectors[0]", "an artifact selector", []string{"producerSubtask", "outputArtifactKey"}, nil)
		task, ok1 := c.scalarOf(v["producerSubtask"], f+".artifactSelectors[0].producerSubtask", "a task name")
		key, ok2 := c.scalarOf(v["outputArtifactKey"], f+".artifactSelectors[0].outputArtifactKey", "an output name")
		if ok1 && ok2 {
			if ref, ok := c.artifactRef(task, key, v["producerSubtask"], f+".artifactSelectors[0].producerSubtask"); ok {
				c.add(out, k.Value, k, f, c.str(ref, s.Content[0], f+".artifactSelectors[0]"))
			}
		}
	}
	return out
}

// oneOf converts the selectors of a dsl.OneOf output (sels, a list of
// {producerSubtask, KEY}) into a pipeline output {oneOf: [REF, ...]}: the
// output of the first of the branches that ran.
func (c *conv) oneOf(sels *yaml.Node, field, key string, artifact bool) *yaml.Node {
	if sels == nil || sels.Kind != yaml.SequenceNode || len(sels.Content) < 2 {
		at := sels
		if at == nil {
			return nil
		}
		c.errorf(at, field, "expected two or more selectors (dsl.OneOf)")
		return nil
	}
	list := c.seq(sels, field)
	for j, e := range sels.Content {
		ef := fmt.Sprintf("%s[%d]", field, j)
		v := c.fieldsOf(e, ef, "a selector", []string{"producerSubtask", key}, nil)
		task, ok1 := c.scalarOf(v["producerSubtask"], ef+".producerSubtask", "a task name")
		out, ok2 := c.scalarOf(v[key], ef+"."+key, "an output name")
		if !ok1 || !ok2 {
			return nil
		}
		ref, ok := c.ref(task, out, artifact, v["producerSubtask"], ef+".producerSubtask")
		if !ok {
			return nil
		}
		list.Content = append(list.Content, c.str(ref, e, ef))
	}
	return c.mapping(sels, field, c.str("oneOf", sels, field), list)
}

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

var dnsUnsafeRE = regexp.MustCompile(`[^a-z0-9-]+`)

// componentName is the name of KFP component comp-NAME: NAME.
func componentName(kfp string) string {
	n := strings.TrimPrefix(kfp, "comp-")
	n = strings.Trim(dnsUnsafeRE.ReplaceAllString(strings.ToLower(n), "-"), "-")
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
	ins := c.inputDefs(fs["inputDefinitions"], field+".inputDefinitions", true)
	outs := c.inputDefs(fs["outputDefinitions"], field+".outputDefinitions", false)
	cv.ins, cv.outs = ins, outs
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
	switch img := cs["image"]; {
	case cs["command"] != nil:
	case img != nil && (img.Value == "argostub/createpvc" || img.Value == "argostub/deletepvc"):
		// kfp-kubernetes' CreatePVC and DeletePVC: KFP's driver does them.
		c.errorf(img, cf+".image", "KFP %s (kubernetes.CreatePVC, DeletePVC) is not supported%s", img.Value, volumeWhy)
	default:
		c.errorf(cont, cf, "missing: command (a container component with args only runs its image's entrypoint; pipectl runs the program itself, locally without an image: write the entrypoint as command)")
	}
	if n := cs["env"]; n != nil {
		kf := cf + ".env"
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
	return out
}

// compConv converts the placeholders of one component.
type compConv struct {
	ins, outs []ioDef
	// executorInput returns the pipectl form of {{$}}; nil when the
	// executor input is not supported.
	executorInput func() (string, error)
}

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
		// KFP's task name ({{$.pipeline_task_name}} in a constant) is
		// taskInfo.name.
		c.taskName = key.Value
		if tn, _, ok := yamlfile.Lookup(t["taskInfo"], "name"); ok && tn.Kind == yaml.ScalarNode {
			c.taskName = tn.Value
		}
		inputs = c.taskInputs(in, field+".inputs", name)
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
				if m := wholeInParamRE.FindStringSubmatch(v.Value); m != nil {
					copyOf = m[1]
				}
			}
			if !declared && (usedByResources[k] || usedByResources[copyOf]) {
				continue
			}
			kept = append(kept, inputs.Content[i], inputs.Content[i+1])
		}
		inputs.Content = kept
		c.add(step, "inputs", in, field+".inputs", inputs)
	}
	if tp := t["triggerPolicy"]; tp != nil {
		pf := field + ".triggerPolicy"
		p := c.fieldsOf(tp, pf, "a triggerPolicy", []string{"condition", "strategy"}, nil)
		if st := p["strategy"]; st != nil {
			switch {
			case st.Value != "ALL_UPSTREAM_TASKS_COMPLETED":
				c.errorf(st, pf+".strategy", "unknown strategy %q (expected ALL_UPSTREAM_TASKS_COMPLETED)", st.Value)
			case !c.atRoot:
				c.errorf(st, pf+".strategy", "KFP strategy ALL_UPSTREAM_TASKS_COMPLETED (dsl.ExitHandler, ignore_upstream_failure) is supported on a task of the root DAG only (a finally step, or a step with trigger: completed when it reads an upstream task's output)")
			case p["condition"] != nil:
				c.errorf(p["condition"], pf+".condition", "a condition on a task that runs whatever its upstream tasks did is not supported")
			case readsTaskOutput(t["inputs"]):
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
	if d := t["dependentTasks"]; d != nil && !c.final {
		after := c.seq(d, field+".dependentTasks")
		if d.Kind != yaml.SequenceNode {
			c.errorf(d, field+".dependentTasks", "expected a list of task names")
		}
		for j, e := range d.Content {
			if v, ok := c.scalarOf(e, fmt.Sprintf("%s.dependentTasks[%d]", field, j), "a task name"); ok {
				for _, name := range c.stepsOf(v) {
					after.Content = append(after.Content, c.str(name, e, fmt.Sprintf("%s.dependentTasks[%d]", field, j)))
				}
			}
		}
		c.add(step, "after", d, field+".dependentTasks", after)
	}
	// KFP reads a left-out enableCache as false.
	enable := false
	if co := t["cachingOptions"]; co != nil {
		o := c.fieldsOf(co, field+".cachingOptions", "cachingOptions", []string{"enableCache"}, map[string]string{"cacheKey": " (pipectl's cache key is the step's fingerprint)"})
		if e := o["enableCache"]; e != nil {
			if e.Value != "true" && e.Value != "false" {
				c.errorf(e, field+".cachingOptions.enableCache", "expected true or false")
			}
			enable = e.Value == "true"
		}
	}
	// A sub-DAG's task caches nothing itself: its tasks say what they cache.
	if k, _, _ := yamlfile.Lookup(comp, "kind"); !enable && k.Value != "Pipeline" {
		at := key
		if t["cachingOptions"] != nil {
			at = t["cachingOptions"]
		}
		c.add(step, "cache", at, field+".cachingOptions", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false", Line: at.Line, Column: at.Column})
	}
	if rp := t["retryPolicy"]; rp != nil {
		rf := field + ".retryPolicy"
		r := c.fieldsOf(rp, rf, "a retryPolicy", []string{"maxRetryCount", "backoffDuration", "backoffFactor", "backoffMaxDuration"}, nil)
		if d := r["backoffDuration"]; d != nil && d.Value != "0s" && d.Value != "0" {
			c.errorf(d, rf+".backoffDuration", "a retry backoff is not supported yet (pipectl retries at once): expected 0s, got %q", d.Value)
		}
		if m := r["maxRetryCount"]; m != nil {
			c.at(m, rf+".maxRetryCount")
			c.add(step, "retries", m, rf+".maxRetryCount", m)
		}
	}
	return step
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

// taskOutputParameter is the reference a taskOutputParameter (n, at
// field) stands for: the output of its producerTask (outputRef).
func (c *conv) taskOutputParameter(n *yaml.Node, field string) (string, bool) {
	o := c.fieldsOf(n, field, "a taskOutputParameter", []string{"producerTask", "outputParameterKey"}, nil)
	task, ok1 := c.scalarOf(o["producerTask"], field+".producerTask", "a task name")
	key, ok2 := c.scalarOf(o["outputParameterKey"], field+".outputParameterKey", "an output name")
	if !ok1 || !ok2 {
		return "", false
	}
	return c.outputRef(task, key, o["producerTask"], field+".producerTask")
}

// taskInputs converts a task's inputs into the step's inputs.
func (c *conv) taskInputs(n *yaml.Node, field, comp string) *yaml.Node {
	out := c.mapping(n, field)
	fs := c.fieldsOf(n, field, "task inputs", []string{"parameters", "artifacts"}, nil)
	// Constants holding placeholders of other task inputs (an f-string of
	// pipeline channels) are resolved once every input is known.
	var pending []pendingConst
	defer func() { c.channels(out, pending, comp) }()
	pk, pv := yamlfile.Pairs(fs["parameters"])
	for i, k := range pk {
		f := join(field, "parameters."+k.Value)
		s := c.fieldsOf(pv[i], f, "a task input parameter", []string{"componentInputParameter", "taskOutputParameter", "runtimeValue", "parameterExpressionSelector", "taskFinalStatus"}, nil)
		if tf := s["taskFinalStatus"]; tf != nil {
			o := c.fieldsOf(tf, f+".taskFinalStatus", "a taskFinalStatus", []string{"producerTask"}, nil)
			if task, ok := c.scalarOf(o["producerTask"], f+".taskFinalStatus.producerTask", "a task name"); ok {
				c.add(out, k.Value, k, f, c.str(finalStatus(task), tf, f+".taskFinalStatus"))
			}
			continue
		}
		if s["parameterExpressionSelector"] != nil && s["componentInputParameter"] == nil {
			c.errorf(s["parameterExpressionSelector"], f+".parameterExpressionSelector", "KFP parameterExpressionSelector is supported on a loop item only (a field of a ParallelFor item)")
			continue
		}
		switch {
		case s["componentInputParameter"] != nil:
			if v, ok := c.scalarOf(s["componentInputParameter"], f+".componentInputParameter", "an input name"); ok {
				if _, imported := c.importParam(v); imported && len(c.loops) == 0 && c.dagTasks == c.rootTasks && c.importedIn[comp][k.Value] == "" {
					c.errorf(s["componentInputParameter"], f+".componentInputParameter", "root input parameter %q is an importer's URI, an artifact param: pipectl cannot also give it as a value", v)
					continue
				}
				if len(c.loops) == 0 && c.omitted[v] {
					// Given by no task: the input has no value.
					c.at(s["componentInputParameter"], f+".componentInputParameter")
					continue
				}
				val, err := c.scoped(v, s["parameterExpressionSelector"])
				if err != nil {
					c.errorf(s["componentInputParameter"], f, "%v", err)
					continue
				}
				c.add(out, k.Value, k, f, c.str(val, s["componentInputParameter"], f+".componentInputParameter"))
			}
		case s["taskOutputParameter"] != nil:
			if ref, ok := c.taskOutputParameter(s["taskOutputParameter"], f+".taskOutputParameter"); ok {
				c.add(out, k.Value, k, f, c.str(ref, s["taskOutputParameter"], f+".taskOutputParameter"))
			}
		case s["runtimeValue"] != nil:
			r := c.fieldsOf(s["runtimeValue"], f+".runtimeValue", "a runtimeValue", []string{"constant"}, nil)
			v := r["constant"]
			switch {
			case v == nil:
				c.errorf(s["runtimeValue"], f+".runtimeValue", "missing: constant")
			case components.IsNull(v):
			case hasBraces(v):
				pending = append(pending, pendingConst{key: k, node: v, field: f})
			case v.Kind != yaml.ScalarNode && innerBraces(v) != nil:
				// A pipeline channel inside a list or struct (an f-string
				// in google-cloud-pipeline-components' worker_pool_specs):
				// its value in the constant's JSON text, as Vertex AI fills
				// it in (KFP's own driver passes the constant as written
				// and its launcher replaces it in the command line, or not,
				// by Go's map order).
				pending = append(pending, pendingConst{key: k, node: v, field: f})
			default:
				c.at(v, f+".runtimeValue.constant")
				if c.paramType(comp, k.Value) == "NUMBER_INTEGER" {
					v = wholeNumber(v)
				}
				c.add(out, k.Value, k, f, v)
			}
		}
	}
	ak, av := yamlfile.Pairs(fs["artifacts"])
	for i, k := range ak {
		f := join(field, "artifacts."+k.Value)
		s := c.fieldsOf(av[i], f, "a task input artifact", []string{"componentInputArtifact", "taskOutputArtifact"}, nil)
		switch {
		case s["componentInputArtifact"] != nil:
			if v, ok := c.scalarOf(s["componentInputArtifact"], f+".componentInputArtifact", "an input name"); ok {
				if len(c.loops) == 0 && c.omitted[v] {
					// Given by no task: the input has no value.
					c.at(s["componentInputArtifact"], f+".componentInputArtifact")
					continue
				}
				val, err := c.scoped(v, nil)
				if err != nil {
					c.errorf(s["componentInputArtifact"], f, "%v", err)
					continue
				}
				c.add(out, k.Value, k, f, c.str(val, s["componentInputArtifact"], f+".componentInputArtifact"))
			}
		case s["taskOutputArtifact"] != nil:
			o := c.fieldsOf(s["taskOutputArtifact"], f+".taskOutputArtifact", "a taskOutputArtifact", []string{"producerTask", "outputArtifactKey"}, nil)
			task, ok1 := c.scalarOf(o["producerTask"], f+".taskOutputArtifact.producerTask", "a task name")
			key, ok2 := c.scalarOf(o["outputArtifactKey"], f+".taskOutputArtifact.outputArtifactKey", "an output name")
			if ok1 && ok2 {
				if ref, ok := c.artifactRef(task, key, o["producerTask"], f+".taskOutputArtifact.producerTask"); ok {
					c.add(out, k.Value, k, f, c.str(ref, s["taskOutputArtifact"], f+".taskOutputArtifact"))
				}
			}
		}
	}
	return out
}

// hasBraces reports whether a string constant holds {{ (a structured
// constant is a JSON value, which pipectl never reads references in).
func hasBraces(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "{{")
}

// given reports whether a task of the file gives input name of KFP
// component comp (an input artifact when artifact is set, else an input
// parameter).
func (c *conv) given(comp, name string, artifact bool) bool {
	kind := "parameters"
	if artifact {
		kind = "artifacts"
	}
	dags := []*yaml.Node{}
	if r, _, ok := yamlfile.Lookup(c.f.Root, "root", "dag", "tasks"); ok {
		dags = append(dags, r)
	}
	_, cs := yamlfile.Pairs(c.comps)
	for _, v := range cs {
		if t, _, ok := yamlfile.Lookup(v, "dag", "tasks"); ok {
			dags = append(dags, t)
		}
	}
	for _, tasks := range dags {
		_, ts := yamlfile.Pairs(tasks)
		for _, t := range ts {
			if bodyOf(t) != comp {
				continue
			}
			if _, _, ok := yamlfile.Lookup(t, "inputs", kind, name); ok {
				return true
			}
		}
	}
	return false
}

// innerBraces is the first string below n holding {{, or nil.
func innerBraces(n *yaml.Node) *yaml.Node {
	if hasBraces(n) {
		return n
	}
	for _, e := range n.Content {
		if b := innerBraces(e); b != nil {
			return b
		}
	}
	return nil
}

// paramType is the parameterType of input parameter name of KFP component
// comp, or "".
func (c *conv) paramType(comp, name string) string {
	n, _, ok := yamlfile.Lookup(c.comps, comp, "inputDefinitions", "parameters", name, "parameterType")
	if !ok || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

var wholeFloatRE = regexp.MustCompile(`^-?[0-9]+\.0*$`)

// wholeNumber is an integer's value as KFP holds it: the IR writes every
// number as a double (3.0), which is the integer 3.
func wholeNumber(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind != yaml.ScalarNode || !wholeFloatRE.MatchString(n.Value) {
		return n
	}
	m := *n
	m.Value, _, _ = strings.Cut(n.Value, ".")
	m.Tag = "!!int"
	return &m
}

var conditionRE = regexp.MustCompile(`^(!\()?\s*(?:(int|double|bool)\()?inputs\.parameter_values\['([^']+)'\]\)?\s*(==|!=|<=|>=|<|>)\s*('[^']*'|-?[0-9][0-9.]*|true|false|(?:(?:int|double|bool)\()?inputs\.parameter_values\['([^']+)'\]\)?)\s*(\))?$`)

// negated are the operators of the negation of a comparison.
var negated = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

// condition is the when of a task's triggerPolicy.condition: KFP writes a
// CEL expression; pipectl runs comparisons of a task input with a literal
// or another task input (==, !=, <, <=, >, >=; dsl.If(x == 'heads'),
// dsl.If(x > 5) under int() or double()), each possibly negated as
// !(...) (dsl.Else), joined by && (dsl.Elif: the earlier branches'
// negations and its own).
func condition(cond string, inputs *yaml.Node) (string, error) {
	var parts []string
	for _, part := range strings.Split(cond, "&&") {
		p, err := comparison(cond, part, inputs)
		if err != nil {
			return "", err
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " && "), nil
}

// comparison is one comparison of condition cond.
func comparison(cond, part string, inputs *yaml.Node) (string, error) {
	m := conditionRE.FindStringSubmatch(strings.TrimSpace(part))
	if m == nil || (m[1] != "") != (m[7] != "") {
		return "", fmt.Errorf("condition %q is not supported yet: pipectl runs comparisons (==, !=, <, <=, >, >=) of a task input with a literal or another task input, each possibly negated as !(...), joined by &&", cond)
	}
	input := func(name string) (string, error) {
		v, _, ok := yamlfile.Lookup(inputs, name)
		if inputs == nil || !ok || v.Kind != yaml.ScalarNode || !strings.HasPrefix(v.Value, "{{") {
			return "", fmt.Errorf("condition %q: the task has no input parameter %q given by a pipeline input or a task output", cond, name)
		}
		return v.Value, nil
	}
	left, err := input(m[3])
	if err != nil {
		return "", err
	}
	op := m[4]
	if m[1] != "" {
		op = negated[op]
	}
	if m[6] != "" {
		right, err := input(m[6])
		if err != nil {
			return "", err
		}
		return left + " " + op + " " + right, nil
	}
	lit := strings.Trim(m[5], "'")
	if strings.ContainsAny(lit, "=!{}<>&\\\"") {
		return "", fmt.Errorf("condition %q: the literal %s is not supported", cond, m[5])
	}
	return left + " " + op + " " + lit, nil
}

// pendingConst is a string constant holding placeholders.
type pendingConst struct {
	key, node *yaml.Node
	field     string
}

// channels resolves the constants of pending, which hold placeholders of
// the task's other inputs (KFP's pipeline channels, "{{$.inputs.parameters
// ['pipelinechannel--x']}}", which its driver fills in): each becomes the
// reference its input is, "{{params.P}}" or "{{steps.S.outputs.O}}" (a
// task output's value inside the text). The channel inputs the component
// does not declare are then dropped from the step's inputs.
func (c *conv) channels(inputs *yaml.Node, pending []pendingConst, comp string) {
	used := map[string]bool{}
	for _, pc := range pending {
		text := pc.node.Value
		if pc.node.Kind != yaml.ScalarNode {
			js, err := components.NodeValue(components.TypeJSON, pc.node)
			if err != nil {
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "%v", err)
				continue
			}
			text = js
		}
		var b strings.Builder
		ok := true
		rest := text
		for ok {
			loc := placeholderRE.FindStringSubmatchIndex(rest)
			if loc == nil {
				break
			}
			b.WriteString(rest[:loc[0]])
			body := rest[loc[2]:loc[3]]
			m := inParamRE.FindStringSubmatch(body)
			var ref *yaml.Node
			if m != nil {
				ref, _, _ = yamlfile.Lookup(inputs, m[1])
			}
			switch {
			case body == ".pipeline_job_name" || body == ".pipeline_job_uuid" || body == ".pipeline_job_resource_name":
				// The run: pipectl's run id names it, is its id and its
				// Argo Workflow's name.
				b.WriteString("{{run.id}}")
			case body == ".pipeline_task_name" && c.taskName != "":
				b.WriteString(c.taskName)
			case body == ".pipeline_task_uuid" && c.atRoot:
				// KFP's driver gives the ML Metadata id of the DAG
				// execution the task runs in: at the root, the run's.
				b.WriteString("{{run.id}}")
			case body == ".pipeline_task_uuid":
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$.pipeline_task_uuid}} in a constant inside a sub-DAG or ParallelFor body is not supported: KFP's driver gives the ML Metadata id of the DAG execution the task runs in (a sub-DAG's, an iteration's), which pipectl has no counterpart of; at the root it is the run's id ({{$.pipeline_job_uuid}})")
				ok = false
			case m == nil:
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$%s}} in a constant is not supported yet (supported: {{$.inputs.parameters['NAME']}} of another input of the task, {{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}, {{$.pipeline_job_resource_name}}, {{$.pipeline_task_name}}, {{$.pipeline_task_uuid}} at the root)", body)
				ok = false
			case ref == nil || ref.Kind != yaml.ScalarNode || !strings.HasPrefix(ref.Value, "{{"):
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$%s}}: the task has no input %q given by a pipeline input or a task output", rest[loc[2]:loc[3]], m[1])
				ok = false
			default:
				used[m[1]] = true
				b.WriteString(ref.Value)
			}
			rest = rest[loc[1]:]
		}
		if !ok {
			continue
		}
		if strings.Contains(rest, "{{") {
			c.errorf(pc.node, pc.field+".runtimeValue.constant", "a constant holding {{ outside a KFP placeholder is not supported (pipectl would read it as a reference)")
			continue
		}
		b.WriteString(rest)
		c.at(pc.node, pc.field+".runtimeValue.constant")
		c.add(inputs, pc.key.Value, pc.key, pc.field, c.str(b.String(), pc.node, pc.field+".runtimeValue.constant"))
	}
	if len(used) == 0 {
		return
	}
	kept := inputs.Content[:0]
	for i := 0; i+1 < len(inputs.Content); i += 2 {
		name := inputs.Content[i].Value
		if _, _, declared := yamlfile.Lookup(c.comps, comp, "inputDefinitions", "parameters", name); used[name] && !declared {
			continue
		}
		kept = append(kept, inputs.Content[i], inputs.Content[i+1])
	}
	inputs.Content = kept
}

// place gives n and the nodes below it the position of at.
func place(n, at *yaml.Node) {
	n.Line, n.Column = at.Line, at.Column
	for _, e := range n.Content {
		place(e, at)
	}
}

// finalStatus is the value of a dsl.PipelineTaskFinalStatus input given by
// taskFinalStatus of task: the JSON object KFP gives, its state the run's
// status as a finally step reads it ({{run.status}}: Succeeded, Failed or
// Cancelled; KFP's driver writes the producer's ML Metadata state,
// COMPLETE, FAILED or CANCELED).
func finalStatus(task string) string {
	return `{"state": "{{run.status}}", "pipelineTaskName": "` + task + `", "error": {}}`
}
