package pipeline

import (
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// ParseTrainJob reads a Kubeflow Trainer TrainJob file (and the runtimes
// it holds besides, as kubectl apply -f would create them) as a pipeline
// of one distributed step named after the TrainJob, running its runtime
// (runtimeRef, from the file, opts.Runtimes) with its trainer's image,
// command, args, env, numNodes, numProcPerNode and resourcesPerNode, and
// the nodeSelector and tolerations of its runtimePatches.
func ParseTrainJob(path string, data []byte, opts LoadOptions) (*Pipeline, error) {
	f, set, warns, err := trainJobFile(path, data, opts.Runtimes)
	if err != nil {
		return nil, err
	}
	p, err := decodeIn(f, nil, nil, set)
	if p != nil {
		p.Warnings = append(warns, p.Warnings...)
	}
	return p, err
}

// trainJobFile is the pipeline of the TrainJob file path holding data, as
// a pipeline file whose nodes carry the lines of the TrainJob's fields;
// the runtimes its step may name (those of the file over base), and the
// warnings of what it does not use.
func trainJobFile(path string, data []byte, base *trainer.Set) (*yamlfile.File, *trainer.Set, []string, error) {
	docs, err := trainer.Docs(path, data)
	if err != nil {
		return nil, nil, nil, err
	}
	own := &trainer.Set{}
	_, rtErr := own.AddDocs(path, docs)
	var job *trainer.TrainJob
	var errs []error
	for _, d := range docs {
		switch {
		case d.IsTrainer() && d.Kind == trainer.KindTrainJob && job != nil:
			errs = append(errs, &yamlfile.Error{File: path, Line: d.Root.Line, Column: d.Root.Column, Msg: "a second TrainJob: pipectl runs one TrainJob per file"})
		case d.IsTrainer() && d.Kind == trainer.KindTrainJob:
			if job, err = trainer.ParseTrainJob(path, d.Root); err != nil {
				errs = append(errs, err)
			}
		case !d.IsRuntime():
			errs = append(errs, &yamlfile.Error{File: path, Line: d.Root.Line, Column: d.Root.Column, Field: "kind",
				Msg: fmt.Sprintf("a TrainJob file may hold runtimes besides its TrainJob, not %s %s", d.APIVersion, d.Kind)})
		}
	}
	if rtErr != nil || len(errs) > 0 {
		return nil, nil, nil, errors.Join(append([]error{rtErr}, errs...)...)
	}
	if len(job.Refused) > 0 {
		return nil, nil, nil, errors.Join(job.Refused...)
	}
	set := base.Merge(own)
	r, err := set.Lookup(job.RuntimeKind, job.RuntimeName)
	if err != nil {
		return nil, nil, nil, &yamlfile.Error{File: path, Line: job.RuntimeNode.Line, Column: job.RuntimeNode.Column, Field: "spec.runtimeRef.name", Msg: err.Error()}
	}
	root, warns, err := trainJobPipeline(job, r)
	if err != nil {
		return nil, nil, nil, err
	}
	return &yamlfile.File{Path: path, Root: root}, set, append(job.Warnings, warns...), nil
}

// trainJobPipeline is the pipeline of TrainJob j, as a YAML tree whose
// nodes carry the lines of the TrainJob's fields they come from.
func trainJobPipeline(j *trainer.TrainJob, r *trainer.Runtime) (root *yaml.Node, warns []string, err error) {
	at := j.TrainerNode
	if at == nil {
		at = j.Root
	}
	// The trainer's fields win over its runtimePatches', which win over the runtime's.
	tp := trainer.Overlay(j.Patch, j.Trainer)
	command, args := tp.Command, tp.Args
	if command == nil {
		command = r.Pod.Command
		if args == nil {
			args = r.Pod.Args
		}
	}
	if len(command) == 0 {
		return nil, nil, &yamlfile.Error{File: j.File, Line: at.Line, Column: at.Column, Field: "spec.trainer.command",
			Msg: fmt.Sprintf("missing: the command to run (runtime %q gives none)", r.Name)}
	}
	comp := mapping(at, "apiVersion", scalar(at, components.APIVersion), "kind", scalar(at, "Component"),
		"metadata", mapping(at, "name", scalar(at, j.Name)), "command", strs(at, command))
	if len(args) > 0 {
		comp.Content = append(comp.Content, scalar(at, "args"), strs(at, args))
	}
	dist := mapping(at, "runtime", scalar(j.RuntimeNode, r.Name))
	if j.NumNodes > 0 {
		dist.Content = append(dist.Content, scalar(at, "nodes"), intNode(at, j.NumNodes))
	}
	if j.ProcsPerNode > 0 {
		dist.Content = append(dist.Content, scalar(at, "procsPerNode"), intNode(at, j.ProcsPerNode))
	}
	if tp.Requests != nil || tp.Limits != nil {
		field := "spec.trainer.resourcesPerNode"
		res, err := ResourcesOf(tp.Requests, tp.Limits, func(w string) {
			warns = append(warns, (&yamlfile.Error{File: j.File, Line: at.Line, Column: at.Column, Field: field, Msg: w}).Error())
		})
		if err != nil {
			return nil, nil, &yamlfile.Error{File: j.File, Line: at.Line, Column: at.Column, Field: field, Msg: err.Error()}
		}
		var n yaml.Node
		if err := n.Encode(res); err != nil {
			return nil, nil, err
		}
		dist.Content = append(dist.Content, scalar(at, "resources"), relocate(&n, at))
	}
	for _, f := range []struct {
		name string
		v    any
		set  bool
	}{
		{"nodeSelector", tp.NodeSelector, tp.NodeSelector != nil},
		{"tolerations", toTolerations(tp.Tolerations), tp.Tolerations != nil},
		{"affinity", tp.Affinity, tp.Affinity != nil},
		{"priorityClass", tp.PriorityClass, tp.PriorityClass != ""},
		{"gang", map[string]any{"kueue": map[string]string{"queue": j.Queue}}, j.Queue != ""},
	} {
		if f.set {
			var n yaml.Node
			if err := n.Encode(f.v); err != nil {
				return nil, nil, err
			}
			dist.Content = append(dist.Content, scalar(at, f.name), relocate(&n, at))
		}
	}
	step := mapping(at, "name", scalar(at, j.Name), "component", comp, "distributed", dist)
	if tp.Image != "" {
		step.Content = append(step.Content, scalar(at, "image"), scalar(at, tp.Image))
	}
	if len(tp.Env) > 0 {
		env := &yaml.Node{Kind: yaml.SequenceNode, Line: at.Line, Column: at.Column}
		for _, e := range tp.Env {
			env.Content = append(env.Content, mapping(at, "name", scalar(at, e.Name), "value", scalar(at, e.Value)))
		}
		step.Content = append(step.Content, scalar(at, "env"), env)
	}
	return mapping(j.Root, "apiVersion", scalar(j.Root, components.APIVersion), "kind", scalar(j.Root, "Pipeline"),
		"metadata", mapping(j.Root, "name", scalar(j.Root, j.Name)),
		"steps", &yaml.Node{Kind: yaml.SequenceNode, Line: at.Line, Column: at.Column, Content: []*yaml.Node{step}}), warns, nil
}

func toTolerations(ts []trainer.Toleration) []Toleration {
	out := make([]Toleration, len(ts))
	for i, t := range ts {
		out[i] = Toleration(t)
	}
	return out
}

func scalar(at *yaml.Node, v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: at.Line, Column: at.Column}
}

func intNode(at *yaml.Node, v int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v), Line: at.Line, Column: at.Column}
}

func strs(at *yaml.Node, vs []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Line: at.Line, Column: at.Column}
	for _, v := range vs {
		n.Content = append(n.Content, scalar(at, v))
	}
	return n
}

// mapping is a mapping of the keys and values kv (key, value, ...).
func mapping(at *yaml.Node, kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Line: at.Line, Column: at.Column}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalar(at, kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}

// relocate gives n and the nodes below it at's position.
func relocate(n *yaml.Node, at *yaml.Node) *yaml.Node {
	n.Line, n.Column = at.Line, at.Column
	for _, c := range n.Content {
		relocate(c, at)
	}
	return n
}
