package kfpv2

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

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
