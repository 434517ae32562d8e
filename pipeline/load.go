package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/kfpv2"
)

// Load reads, decodes and validates the pipeline file at path, with the
// components it names. Every problem found is returned, joined; each is a
// *yamlfile.Error naming file, line, column and field.
func Load(path string) (*Pipeline, error) {
	data, err := yamlfile.ReadBytes(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse is Load for a pipeline held in memory; path names it in messages
// and anchors relative component paths.
func Parse(path string, data []byte) (*Pipeline, error) {
	if kfpv2.Is(data) {
		return parseKFPv2(path, data)
	}
	f, err := yamlfile.Parse(path, data)
	if err != nil {
		return nil, err
	}
	return decode(f, nil)
}

// decode decodes and validates the pipeline of f, which the pipelines of
// chain (outermost first) use as a step's component, and expands the
// pipelines its own steps use (see expand).
func decode(f *yamlfile.File, chain []chainLink) (*Pipeline, error) {
	return decodeWith(f, chain, nil)
}

// decodeWith is decode, calling decoded (when not nil) on the pipeline as
// decoded, before it is checked.
func decodeWith(f *yamlfile.File, chain []chainLink, decoded func(*Pipeline)) (*Pipeline, error) {
	p := &Pipeline{Source: f.Path}
	decodeErr := f.Decode(f.Root, "", p)
	if decodeErr != nil {
		// Report what the semantic checks find too, when the file decodes
		// leniently (unknown fields, say); otherwise the decode errors alone.
		p = &Pipeline{Source: f.Path}
		if f.Root.Decode(p) != nil {
			return nil, decodeErr
		}
	}
	if decoded != nil {
		decoded(p)
	}
	for i := range p.Finally {
		p.Finally[i].Finally = true
	}
	nMain := len(p.Steps)
	p.Steps = append(p.Steps, p.Finally...)
	p.Finally = nil
	// A null default or input (null, ~ or nothing) is not given.
	for name, prm := range p.Params {
		if components.IsNull(&prm.Default) {
			prm.Default = yaml.Node{}
			p.Params[name] = prm
		}
	}
	for _, s := range p.Steps {
		for name, n := range s.Inputs {
			if components.IsNull(&n) {
				delete(s.Inputs, name)
			}
		}
	}
	if n, _, ok := yamlfile.Lookup(f.Root, "params"); ok && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			p.ParamOrder = append(p.ParamOrder, n.Content[i].Value)
		}
	}
	if n, _, ok := yamlfile.Lookup(f.Root, "outputs"); ok && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			p.OutputOrder = append(p.OutputOrder, n.Content[i].Value)
		}
	}
	p.byName = make(map[string]int, len(p.Steps))
	for i, s := range p.Steps {
		p.byName[s.Name] = i
	}
	v := &validator{f: f, p: p, nMain: nMain, loaded: map[string]*components.Component{},
		chain: append(slices.Clip(chain), chainLink{path: f.Path, abs: absPath(f.Path)}), subs: map[int]*Pipeline{}, subFiles: map[string]*Pipeline{}, metaRefs: map[string][]metaRef{}}
	v.validate()
	if decodeErr == nil && len(v.errs) == 0 {
		v.expand()
	}
	if decodeErr != nil || len(v.errs) > 0 {
		return nil, errors.Join(append([]error{decodeErr}, v.errs...)...)
	}
	return p, nil
}

// validator collects every problem of a pipeline.
type validator struct {
	f *yamlfile.File
	p *Pipeline
	// nMain is the number of steps before the finally steps in p.Steps.
	nMain  int
	errs   []error
	loaded map[string]*components.Component
	// chain are the pipeline files being loaded, outermost first, ending
	// with this one: a step's pipeline among them is a recursion.
	chain []chainLink
	// subs are the pipelines steps use as their component, by step index;
	// subFiles the pipelines loaded, by path.
	subs     map[int]*Pipeline
	subFiles map[string]*Pipeline
	// metaRefs are the step outputs the metadata of artifact params
	// embed, by param (checkMetadata).
	metaRefs map[string][]metaRef
}

// sp is the path of steps[i] (or finally[j] for a finally step), then rest.
func (v *validator) sp(i int, rest ...any) []any {
	if i < v.nMain {
		return append([]any{"steps", i}, rest...)
	}
	return append([]any{"finally", i - v.nMain}, rest...)
}

// at reports a problem at the key (or value) found at path.
func (v *validator) at(path []any, format string, args ...any) {
	n, k, _ := yamlfile.Lookup(v.f.Root, path...)
	if k != nil {
		n = k
	}
	v.errs = append(v.errs, v.f.Errorf(n, components.FieldPath(path...), format, args...))
}

// atValue reports a problem at the value found at path.
func (v *validator) atValue(path []any, format string, args ...any) {
	n, _, _ := yamlfile.Lookup(v.f.Root, path...)
	v.errs = append(v.errs, v.f.Errorf(n, components.FieldPath(path...), format, args...))
}

func p(path ...any) []any { return path }

// checkMetadata checks the metadata of artifact param name (Param.Metadata):
// a mapping of the pipeline run itself, JSON, whose strings embed only
// {{params.NAME}} of parameters that are values and step outputs (kept in
// v.metaRefs for checkMetadataSteps).
func (v *validator) checkMetadata(name string, prm Param) {
	path := p("params", name, "metadata")
	field := components.FieldPath(path...)
	switch {
	case len(v.chain) > 1:
		v.at(path, "artifact parameter %q of a pipeline used as a step's component cannot have metadata: the step that uses this pipeline gives it an artifact", name)
		return
	case prm.Metadata.Kind != yaml.MappingNode:
		got := "a " + components.KindName(&prm.Metadata)
		if prm.Metadata.Kind == yaml.ScalarNode {
			got = describeNode(&prm.Metadata)
		}
		v.atValue(path, "expected a mapping (the artifact's metadata), got %s", got)
		return
	}
	if _, err := components.NodeValue(components.TypeJSON, &prm.Metadata); err != nil {
		v.errs = append(v.errs, v.f.Errorf(&prm.Metadata, field, "expected the artifact's metadata as JSON: %v", err))
		return
	}
	eachString(&prm.Metadata, func(n *yaml.Node) {
		_, refs, err := LiteralParts(n.Value)
		if err != nil {
			v.errs = append(v.errs, v.f.Errorf(n, field, "%v", err))
			return
		}
		for _, r := range refs {
			if r.Step != "" {
				// Checked once the steps are known (checkMetadataSteps).
				v.metaRefs[name] = append(v.metaRefs[name], metaRef{node: n, field: field, out: Binding{Step: r.Step, Output: r.Output}})
				continue
			}
			prm, known := v.p.Params[r.Param]
			switch {
			case r.Param == "":
				v.errs = append(v.errs, v.f.Errorf(n, field, "%q: metadata may embed {{params.NAME}} and {{steps.STEP.outputs.OUTPUT}} only", n.Value))
			case !known:
				v.errs = append(v.errs, v.f.Errorf(n, field, "unknown parameter %q in {{params.%s}}", r.Param, r.Param))
			case components.IsArtifact(prm.Type):
				v.errs = append(v.errs, v.f.Errorf(n, field, "parameter %q is an artifact (%s): metadata may embed parameters that are values", r.Param, prm.Type))
			}
		}
	})
}

func (v *validator) validate() {
	pl := v.p
	if pl.APIVersion != components.APIVersion {
		v.atValue(p("apiVersion"), "expected apiVersion %s, got %q", components.APIVersion, pl.APIVersion)
	}
	if pl.Kind != "Pipeline" {
		v.atValue(p("kind"), "expected kind Pipeline, got %q", pl.Kind)
	}
	if pl.Metadata.Name == "" {
		v.at(p("metadata"), "missing: every pipeline needs metadata.name")
	} else if want := components.ValidDNSLabel(pl.Metadata.Name); want != "" {
		v.atValue(p("metadata", "name"), "invalid name %q: expected %s", pl.Metadata.Name, want)
	}
	for _, name := range pl.ParamOrder {
		prm := pl.Params[name]
		if want := components.ValidIdent(name); want != "" {
			v.at(p("params", name), "invalid parameter name %q: expected %s", name, want)
		}
		if components.IsArtifact(prm.Type) {
			// Given by the step of a pipeline that uses this one as its
			// component; run by itself, the URI the run gives, or its
			// default.
			switch {
			case prm.Default.Kind == 0:
			case len(v.chain) > 1:
				v.atValue(p("params", name, "default"), "artifact parameter %q (%s) of a pipeline used as a step's component cannot have a default: the step that uses this pipeline gives it a step output", name, prm.Type)
			default:
				if err := CheckArtifactURI(&prm.Default); err != nil {
					v.atValue(p("params", name, "default"), "invalid default of artifact parameter %q (%s): %v", name, prm.Type, err)
				}
			}
			if prm.Metadata.Kind != 0 {
				v.checkMetadata(name, prm)
			}
			continue
		}
		if prm.Metadata.Kind != 0 {
			v.at(p("params", name, "metadata"), "parameter %q (%s) is a value: only an artifact parameter has metadata", name, prm.Type)
		}
		if !components.IsParam(prm.Type) {
			v.atValue(p("params", name, "type"), "unknown parameter type %q (expected one of: %s; or, in a pipeline used as a step's component, %s)", prm.Type, strings.Join(components.ParamTypes, ", "), strings.Join(components.ArtifactTypes, ", "))
			continue
		}
		if prm.Default.Kind != 0 {
			if _, err := components.NodeValue(prm.Type, &prm.Default); err != nil {
				v.atValue(p("params", name, "default"), "invalid default: %v", err)
			}
		}
	}
	if v.nMain == 0 {
		v.at(p("steps"), "missing: a pipeline needs at least one step")
	}
	index := map[string]int{}
	for i := range pl.Steps {
		s := &pl.Steps[i]
		switch {
		case s.Name == "":
			v.at(v.sp(i), "missing: every step needs a name")
		case components.ValidDNSLabel(s.Name) != "":
			v.atValue(v.sp(i, "name"), "invalid step name %q: expected %s (step names become Kubernetes names)", s.Name, components.ValidDNSLabel(s.Name))
		case s.Name == "journal":
			v.atValue(v.sp(i, "name"), "step name %q is reserved: the store keeps the run's journal at RUN/journal/ (rename the step)", s.Name)
		}
		if j, dup := index[s.Name]; dup && s.Name != "" {
			v.atValue(v.sp(i, "name"), "duplicate step name %q (also %s)", s.Name, components.FieldPath(v.sp(j)...))
		} else {
			index[s.Name] = i
		}
		s.Resolved = v.component(i)
	}
	for i := range pl.Steps {
		v.step(i, index)
	}
	v.checkMetadataSteps(index)
	for _, i := range slices.Sorted(maps.Keys(v.subs)) {
		v.nestedStep(i)
	}
	v.outputsDecl(index)
	if len(v.errs) == 0 {
		v.cycles()
	}
}

// component resolves steps[i].component.
func (v *validator) component(i int) *components.Component {
	n := yamlfile.Deref(&v.p.Steps[i].Component) // component: *name is the anchored one
	switch {
	case n.Kind == 0:
		v.at(v.sp(i), "missing: component (a path to a component file, or an inline component)")
		return nil
	case n.Kind == yaml.ScalarNode:
		if n.Value == "" {
			v.atValue(v.sp(i, "component"), "expected a path to a component file")
			return nil
		}
		path := n.Value
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(v.f.Path), path)
		}
		if c, ok := v.loaded[path]; ok {
			if sub := v.subFiles[path]; sub != nil {
				v.subs[i] = sub
			}
			return c
		}
		st, err := os.Stat(path)
		if err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			v.atValue(v.sp(i, "component"), "cannot read component file %s: %v", path, unwrapPathErr(err))
			v.loaded[path] = nil
			return nil
		}
		f, err := yamlfile.Read(path)
		if err != nil {
			v.errs = append(v.errs, err)
			v.loaded[path] = nil
			return nil
		}
		if !isComponentFile(f.Root) {
			// Say nothing of what the file holds: it may be any file the
			// path reaches (../../etc/shadow), not the user's to quote.
			v.atValue(v.sp(i, "component"), "%s is not a pipeline or component file (expected apiVersion %s with kind Pipeline or Component, or a KFP component with an implementation)", path, components.APIVersion)
			v.loaded[path] = nil
			return nil
		}
		if isPipeline(f.Root) {
			return v.subPipeline(i, f, path)
		}
		c, g, err := kfpv1.Decode(f, f.Root, "")
		if err != nil {
			v.errs = append(v.errs, err)
		}
		v.loaded[path] = c
		if g != nil {
			return v.kfpGraph(i, c, g, path)
		}
		return c
	default:
		if isPipeline(n) {
			return v.inlinePipeline(i, n)
		}
		c, g, err := kfpv1.Decode(v.f, n, components.FieldPath(v.sp(i, "component")...))
		if err != nil {
			v.errs = append(v.errs, err)
			return nil
		}
		if g != nil {
			return v.kfpGraph(i, c, g, "")
		}
		return c
	}
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// step validates one step's inputs, references and options.
func (v *validator) step(i int, index map[string]int) {
	s := &v.p.Steps[i]
	c := s.Resolved
	items := v.loop(i, index)
	for _, name := range slices.Sorted(maps.Keys(s.Inputs)) {
		node := s.Inputs[name]
		path := v.sp(i, "inputs", name)
		if c == nil {
			continue
		}
		in, ok := c.Input(name)
		if !ok {
			v.at(path, "component %s has no input %q (inputs: %s)", c.Metadata.Name, name, ioNames(c.Inputs))
			continue
		}
		vt := in.ValueType()
		b, refs, err := bindingOf(&node, vt)
		if err != nil {
			v.atValue(path, "%v", err)
			continue
		}
		v.checkRefs(path, refs, index, i)
		v.checkItems(path, refs, items)
		switch {
		case b.Param != "":
			prm, ok := v.p.Params[b.Param]
			switch {
			case !ok:
			case prm.kfp != nil:
				if !kfpv1.Compatible(*prm.kfp, in) {
					v.atValue(path, "type mismatch: input %q of the graph is %s, input %q expects %s", b.Param, kfpv1.TypeName(*prm.kfp), name, kfpv1.TypeName(in))
				}
			case components.IsArtifact(prm.Type):
				if !components.IsArtifact(in.Type) && in.Declared == nil || !kfpv1.Compatible(components.IO{Name: b.Param, Type: prm.Type}, in) {
					v.atValue(path, "type mismatch: parameter %q is an artifact (%s), input %q expects %s", b.Param, prm.Type, name, kfpv1.TypeName(in))
				}
			case vt == "" || !components.Assignable(prm.Type, vt):
				v.atValue(path, "type mismatch: parameter %q is %s, input %q expects %s", b.Param, prm.Type, name, in.Type)
			}
		case b.Step != "":
			out, ok := v.output(b.Step, b.Output)
			switch {
			case !ok:
			case v.loops(b.Step) && components.IsArtifact(out.Type) && !components.IsArtifact(in.Type):
				v.atValue(path, "output %q of loop step %q is collected into a directory of its iterations' outputs: input %q (%s) expects a single value", b.Output, b.Step, name, kfpv1.TypeName(in))
			case v.loops(b.Step) && !components.IsArtifact(out.Type) && !kfpv1.Compatible(components.IO{Name: out.Name, Type: components.TypeJSON}, in):
				v.atValue(path, "type mismatch: output %q of loop step %q is collected into a JSON list (json), input %q expects %s (a single value)", b.Output, b.Step, name, kfpv1.TypeName(in))
			case !v.loops(b.Step) && !kfpv1.Compatible(out, in):
				v.atValue(path, "type mismatch: output %q of step %q is %s, input %q expects %s", b.Output, b.Step, kfpv1.TypeName(out), name, kfpv1.TypeName(in))
			}
		case vt == "":
			v.atValue(path, "input %q is an artifact (%s): expected a step output such as \"{{steps.STEP.outputs.OUTPUT}}\"", name, in.Type)
		default:
			v.artifactParams(path, refs)
			v.embeddedOutputs(path, refs)
			if len(refs) == 0 {
				if _, err := components.NodeValue(vt, &node); err != nil {
					v.atValue(path, "input %q: %v", name, err)
				}
			}
		}
	}
	if c != nil {
		for _, in := range c.Inputs {
			if _, given := s.Inputs[in.Name]; !given && in.Required() {
				v.at(v.sp(i), "step %q does not give component %s its required input %q (%s)", s.Name, c.Metadata.Name, in.Name, in.Type)
			}
		}
	}
	for j, a := range s.After {
		k, ok := index[a]
		switch {
		case !ok:
			v.atValue(v.sp(i, "after", j), "unknown step %q (steps: %s)", a, v.stepNames())
		case a == s.Name:
			v.atValue(v.sp(i, "after", j), "a step cannot run after itself")
		default:
			v.checkFinally(v.sp(i, "after", j), i, k)
		}
	}
	if s.When != "" {
		conds, refs, err := ParseWhen(s.When)
		if err != nil {
			v.atValue(v.sp(i, "when"), "%v", err)
		} else {
			v.checkRefs(v.sp(i, "when"), refs, index, i)
			v.artifactParams(v.sp(i, "when"), refs)
			for _, r := range refs {
				if r.step != "" && v.loops(r.step) {
					v.atValue(v.sp(i, "when"), "output %q of loop step %q is collected into a JSON list: a condition compares single values", r.output, r.step)
				}
			}
			for _, c := range conds {
				t := v.p.CompareType(c)
				if IsOrdered(c.Op) && t != components.TypeInt && t != components.TypeFloat {
					v.atValue(v.sp(i, "when"), "%s compares int or float values: expected a reference to an int or float param or output on one side, not %s", c.Op, t)
				}
				for _, side := range []Binding{c.Left, c.Right} {
					if side.Item && s.Distributed != nil {
						v.atValue(v.sp(i, "when"), "a distributed step's when cannot compare its item (its launcher starts the gang of each iteration): compare it in a step before, or loop a pipeline whose distributed step has no when")
					}
					if side.IsRef() || side.Item {
						continue
					}
					if err := components.CheckValue(t, side.Literal); err != nil {
						v.atValue(v.sp(i, "when"), "cannot compare with %q: %v", side.Literal, err)
					}
				}
			}
		}
	}
	v.trigger(i)
	if s.Retries < 0 || s.Retries > MaxRetries {
		v.atValue(v.sp(i, "retries"), "expected 0 to %d, got %d", MaxRetries, s.Retries)
	}
	for j, e := range s.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "= ") {
			v.atValue(v.sp(i, "env", j, "name"), "invalid environment variable name %q", e.Name)
		}
		v.envValue(v.sp(i, "env", j, "value"), e.Value, index, i, items)
	}
	v.secrets(i, index)
	v.resources(i, v.sp(i, "resources"), s.Resources, index)
	v.tolerations(v.sp(i, "tolerations"), s.Tolerations)
	v.podMetadata(i)
	if d := s.Distributed; d != nil {
		v.resources(i, v.sp(i, "distributed", "resources"), d.Resources, index)
		v.tolerations(v.sp(i, "distributed", "tolerations"), d.Tolerations)
		nodesOK := d.Nodes >= 1 && d.Nodes <= MaxNodes
		procsOK := d.ProcsPerNode >= 0 && d.ProcsPerNode <= MaxProcsPerNode
		if !nodesOK {
			v.atValue(v.sp(i, "distributed", "nodes"), "expected 1 to %d nodes, got %d", MaxNodes, d.Nodes)
		}
		if !procsOK {
			v.atValue(v.sp(i, "distributed", "procsPerNode"), "expected 1 to %d, got %d", MaxProcsPerNode, d.ProcsPerNode)
		}
		if nodesOK && procsOK && d.Nodes*d.Procs() > MaxWorldSize {
			v.at(v.sp(i, "distributed"), "nodes × procsPerNode = %d × %d = %d ranks: expected at most %d (WORLD_SIZE)", d.Nodes, d.Procs(), d.Nodes*d.Procs(), MaxWorldSize)
		}
		if d.MaxRestarts < 0 || d.MaxRestarts > MaxRetries {
			v.atValue(v.sp(i, "distributed", "maxRestarts"), "expected 0 to %d, got %d", MaxRetries, d.MaxRestarts)
		}
		if d.Port < 0 || d.Port > 65535 {
			v.atValue(v.sp(i, "distributed", "port"), "expected a TCP port (1-65535), got %d", d.Port)
		}
		if d.ShmSize != "" {
			if q, err := resource.ParseQuantity(d.ShmSize); err != nil || q.Sign() <= 0 {
				v.atValue(v.sp(i, "distributed", "shmSize"), "expected a size such as 8Gi or 512Mi, got %q", d.ShmSize)
			}
		}
		if d.Resources != nil && s.Resources != nil {
			v.at(v.sp(i, "distributed", "resources"), "set resources on the step or under distributed, not both")
		}
		if g := d.Gang; g != nil {
			if g.Kueue != nil && g.PodGroup != nil {
				v.at(v.sp(i, "distributed", "gang"), "choose one of kueue and podGroup")
			}
			if g.Kueue != nil && g.Kueue.Queue == "" {
				v.at(v.sp(i, "distributed", "gang", "kueue"), "missing: queue (the LocalQueue's name)")
			}
			if g.PodGroup != nil && g.PodGroup.Scheduler != "coscheduling" && g.PodGroup.Scheduler != "volcano" {
				v.atValue(v.sp(i, "distributed", "gang", "podGroup", "scheduler"), "expected coscheduling or volcano, got %q", g.PodGroup.Scheduler)
			}
		}
	}
}

// trigger checks steps[i].trigger and, for a step that runs once the steps
// it depends on ended whatever their outcome (trigger: completed), what it
// reads of them: an output of such a step may not be there, so the step
// takes outputs whole, each into an input with a default (or optional),
// which the input has instead when that step did not succeed, and reads
// them nowhere else (in a longer text, a when, its loop's items, a Secret's
// name, its resources), nor the collected outputs of a loop step.
func (v *validator) trigger(i int) {
	s := &v.p.Steps[i]
	switch s.Trigger {
	case "", TriggerSucceeded:
		return
	case TriggerCompleted:
	default:
		v.atValue(v.sp(i, "trigger"), "unknown trigger %q (expected %s, the default: the step runs once every step it depends on succeeded; or %s: once each of them ended, whatever its outcome)", s.Trigger, TriggerSucceeded, TriggerCompleted)
		return
	}
	const why = "a step with trigger: completed runs even when the steps it depends on did not succeed"
	if c := s.Resolved; c != nil {
		for _, name := range slices.Sorted(maps.Keys(s.Inputs)) {
			in, ok := c.Input(name)
			if !ok {
				continue // reported by step
			}
			node := s.Inputs[name]
			b, refs, err := bindingOf(&node, in.ValueType())
			if err != nil {
				continue // reported by step
			}
			path := v.sp(i, "inputs", name)
			switch {
			case b.Step != "" && v.loops(b.Step):
				v.atValue(path, "input %q is given the outputs of loop step %q collected from its iterations: not supported on a step with trigger: completed (%s; give it an output of a step that does not loop)", name, b.Step, why)
			case b.Step != "" && in.Required():
				v.atValue(path, "input %q is given output %q of step %q, which is not there when that step did not succeed: %s, and the input then takes its default; expected a default (or optional: true) on input %q of component %s", name, b.Output, b.Step, why, name, c.Metadata.Name)
			case b.Step == "":
				for _, r := range refs {
					if r.step != "" {
						v.atValue(path, "{{steps.%s.outputs.%s}} inside a text: %s, and that output may not be there; give it whole to an input with a default", r.step, r.output, why)
						break
					}
				}
			}
		}
	}
	if s.When != "" {
		if _, refs, err := ParseWhen(s.When); err == nil {
			for _, r := range refs {
				if r.step != "" {
					v.atValue(v.sp(i, "when"), "the condition reads output %q of step %q: %s, and that output may not be there (compare params only)", r.output, r.step, why)
					break
				}
			}
		}
	}
	if s.Loop != nil {
		if b, err := s.ItemsBinding(); err == nil && b.Step != "" {
			v.atValue(v.sp(i, "loop", "items"), "the items are output %q of step %q: %s, and that output may not be there (loop over a list or a param)", b.Output, b.Step, why)
		}
	}
	for j, sec := range s.Secrets {
		if b := sec.Ref(); b.Step != "" {
			v.atValue(v.sp(i, "secrets", j, "secret"), "the Secret's name is output %q of step %q: %s, and that output may not be there", b.Output, b.Step, why)
		}
	}
	for _, f := range RuntimeFields {
		if b, ok := s.Resources.Refs()[f]; ok && b.Step != "" {
			v.atValue(v.sp(i, "resources", f), "the value is output %q of step %q: %s, and that output may not be there", b.Output, b.Step, why)
		}
	}
}

// envValue checks the references of a step env value: parameters only.
func (v *validator) envValue(path []any, val string, index map[string]int, self int, items []string) {
	_, refs, err := parseRefs(val)
	if err != nil {
		v.atValue(path, "%v", err)
		return
	}
	var params []ref
	for _, r := range refs {
		if r.step != "" {
			v.atValue(path, "an env value cannot use {{steps.%s.outputs.%s}} (give the output to a component input instead)", r.step, r.output)
			continue
		}
		params = append(params, r)
	}
	v.checkRefs(path, params, index, self)
	v.artifactParams(path, params)
	v.checkItems(path, params, items)
}

// embeddedOutputs reports step outputs inside a longer text that cannot
// be there: an artifact, and a loop step's outputs (collected, they are a
// whole JSON list or directory).
func (v *validator) embeddedOutputs(path []any, refs []ref) {
	for _, r := range refs {
		if r.step == "" {
			continue
		}
		out, ok := v.output(r.step, r.output)
		switch {
		case !ok:
		case components.IsArtifact(out.Type):
			v.atValue(path, "output %q of step %q is an artifact (%s): it can only be given whole to an input, as \"{{steps.%s.outputs.%s}}\"", r.output, r.step, out.Type, r.step, r.output)
		case v.loops(r.step):
			v.atValue(path, "output %q of loop step %q is collected into a JSON list: it can only be given whole to an input, as \"{{steps.%s.outputs.%s}}\"", r.output, r.step, r.step, r.output)
		}
	}
}

// artifactParams reports references to artifact parameters (of a pipeline
// used as a component) other than a whole input value.
func (v *validator) artifactParams(path []any, refs []ref) {
	for _, r := range refs {
		if prm, ok := v.p.Params[r.param]; ok && components.IsArtifact(prm.Type) {
			v.atValue(path, "parameter %q is an artifact (%s): it can only be given whole to an artifact input, as \"{{params.%s}}\"", r.param, prm.Type, r.param)
		}
	}
}

// resources checks a resources block of steps[i]: quantities Kubernetes
// accepts, resource names that are qualified names, and a GPU count in
// bounds. Local runs do not use it, but a file that could not run on a
// cluster is refused here, where the error can point at the line. A field
// given at run time (a whole reference) is checked by resourceRef.
func (v *validator) resources(i int, path []any, r *Resources, index map[string]int) {
	if r == nil {
		return
	}
	refs := r.Refs()
	for _, f := range RuntimeFields {
		if b, ok := refs[f]; ok {
			v.resourceRef(i, append(slices.Clone(path), f), f, b, index)
		}
	}
	quantity := func(field []any, value string) {
		if _, err := resource.ParseQuantity(value); value != "" && err != nil {
			v.atValue(append(slices.Clone(path), field...), "expected a quantity such as 500m, 2 or 4Gi, got %q", value)
		}
	}
	name := func(field []any, value string) {
		if msgs := validation.IsQualifiedName(value); len(msgs) > 0 {
			v.atValue(append(slices.Clone(path), field...), "expected a resource name such as nvidia.com/gpu, got %q: %s", value, strings.Join(msgs, "; "))
		}
	}
	if _, ok := refs[ResourceCPU]; !ok {
		quantity(p("cpu"), r.CPU)
	}
	if _, ok := refs[ResourceMemory]; !ok {
		quantity(p("memory"), r.Memory)
	}
	if _, ok := refs[ResourceGPU]; !ok && r.GPU != "" {
		if n, err := strconv.Atoi(r.GPU); err != nil || !digitsRE.MatchString(r.GPU) || n > MaxGPUs {
			v.atValue(append(slices.Clone(path), "gpu"), "expected 0 to %d GPUs, got %q", MaxGPUs, r.GPU)
		}
	}
	if _, ok := refs[ResourceGPUResource]; !ok && r.GPUResource != "" {
		name(p("gpuResource"), r.GPUResource)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Extra)) {
		name(p("extra", k), k)
		quantity(p("extra", k), r.Extra[k])
	}
}

// digitsRE is a whole number as a resource count: decimal digits.
var digitsRE = regexp.MustCompile(`^[0-9]+$`)

// resourceRef checks resources field f of steps[i] (at path), given at
// run time by b: a param or a step's output parameter of a type that can
// hold it (a quantity: string, int or float; a GPU count: int or string;
// a resource name: string), not collected from a loop, on a step that is
// not distributed (its launcher sizes the rank pods from the file).
func (v *validator) resourceRef(i int, path []any, f string, b Binding, index map[string]int) {
	if v.p.Steps[i].Distributed != nil {
		v.atValue(path, "a distributed step's resources are written in the file (its rank pods are sized when the launcher starts), not given at run time")
		return
	}
	types := []string{components.TypeString, components.TypeInt, components.TypeFloat}
	switch f {
	case ResourceGPU:
		types = []string{components.TypeInt, components.TypeString}
	case ResourceGPUResource:
		types = []string{components.TypeString}
	}
	what := map[string]string{ResourceCPU: "a quantity", ResourceMemory: "a quantity", ResourceGPU: "a number of GPUs", ResourceGPUResource: "a resource name"}[f]
	if b.Param != "" {
		switch prm, ok := v.p.Params[b.Param]; {
		case !ok:
			v.atValue(path, "unknown parameter %q (params: %s)", b.Param, v.paramNames())
		case !slices.Contains(types, prm.Type):
			v.atValue(path, "parameter %q is %s: resources.%s is %s (%s)", b.Param, prm.Type, f, what, strings.Join(types, ", "))
		}
		return
	}
	_, refs, _ := parseBinding(b.String())
	before := len(v.errs)
	v.checkRefs(path, refs, index, i)
	if len(v.errs) > before {
		return
	}
	switch out, ok := v.output(b.Step, b.Output); {
	case !ok:
	case v.loops(b.Step):
		v.atValue(path, "output %q of loop step %q is collected into a JSON list: resources.%s is one value", b.Output, b.Step, f)
	case !slices.Contains(types, out.Type):
		v.atValue(path, "output %q of step %q is %s: resources.%s is %s (%s)", b.Output, b.Step, out.Type, f, what, strings.Join(types, ", "))
	}
}

// reservedMetaPrefixes are the label and annotation key prefixes of
// pipectl's and Argo's own pod metadata.
var reservedMetaPrefixes = []string{"pipectl.dev/", "workflows.argoproj.io/"}

// podMetadata checks steps[i].podMetadata: label keys and values and
// annotation keys as Kubernetes takes them, no key of pipectl's or
// Argo's own, no annotation value holding {{ (Argo would evaluate it in
// the pod's template), not on a distributed step.
func (v *validator) podMetadata(i int) {
	m := v.p.Steps[i].PodMetadata
	if m == nil {
		return
	}
	if v.p.Steps[i].Distributed != nil {
		v.at(v.sp(i, "podMetadata"), "podMetadata is not supported on a distributed step yet (its rank pods are made by its launcher)")
	}
	for _, what := range []string{"labels", "annotations"} {
		kv := m.Labels
		if what == "annotations" {
			kv = m.Annotations
		}
		size := 0
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			path := v.sp(i, "podMetadata", what, k)
			size += len(k) + len(kv[k])
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				v.at(path, "invalid key %q: %s", k, strings.Join(msgs, "; "))
			}
			for _, pre := range reservedMetaPrefixes {
				if strings.HasPrefix(k, pre) {
					v.at(path, "key %q is pipectl's or Argo's own (%s...)", k, pre)
				}
			}
			if what == "labels" {
				if msgs := validation.IsValidLabelValue(kv[k]); len(msgs) > 0 {
					v.atValue(path, "invalid label value %q: %s", kv[k], strings.Join(msgs, "; "))
				}
			} else if strings.Contains(kv[k], "{{") {
				v.atValue(path, "an annotation value holding {{ is not supported (Argo would read it as a template reference)")
			}
		}
		if what == "annotations" && size > 256*1024 {
			v.at(v.sp(i, "podMetadata", what), "annotations of %d bytes: Kubernetes takes at most 256 KiB", size)
		}
	}
}

// tolerations checks the operator and effect of each toleration, as
// Kubernetes would when the pod is created.
func (v *validator) tolerations(path []any, ts []Toleration) {
	for j, t := range ts {
		switch t.Operator {
		case "", "Equal", "Exists":
		default:
			v.atValue(append(slices.Clone(path), j, "operator"), "expected Equal or Exists, got %q", t.Operator)
		}
		switch t.Effect {
		case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			v.atValue(append(slices.Clone(path), j, "effect"), "expected NoSchedule, PreferNoSchedule or NoExecute, got %q", t.Effect)
		}
	}
}

// bindingOf reads a step input value node.
func bindingOf(n *yaml.Node, inType string) (Binding, []ref, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		return parseBinding(n.Value)
	}
	val, err := components.NodeValue(inType, n)
	if err != nil {
		return Binding{}, nil, err
	}
	return Binding{Literal: val}, nil, nil
}

// checkRefs reports references to unknown params, steps and outputs, and
// references a step may not make: {{item}} outside a loop, {{run.FIELD}}
// outside a finally step, outputs across the finally boundary.
func (v *validator) checkRefs(path []any, refs []ref, index map[string]int, self int) {
	s := &v.p.Steps[self]
	for _, r := range refs {
		switch {
		case r.item:
			if s.Loop == nil {
				v.atValue(path, "{{item}} is defined only in a step with loop: (step %q has none)", s.Name)
			}
			continue
		case r.run != "":
			if !s.Finally && r.run != RunID {
				v.atValue(path, "{{run.%s}} is defined only in a finally step", r.run)
			}
			continue
		case r.param != "":
			if _, ok := v.p.Params[r.param]; !ok {
				v.atValue(path, "unknown parameter %q (params: %s)", r.param, v.paramNames())
			}
			continue
		}
		j, ok := index[r.step]
		switch {
		case !ok:
			v.atValue(path, "unknown step %q (steps: %s)", r.step, v.stepNames())
			continue
		case j == self:
			v.atValue(path, "step %q cannot use its own output %q", r.step, r.output)
			continue
		}
		if !v.checkFinally(path, self, j) {
			continue
		}
		if c := v.p.Steps[j].Resolved; c != nil {
			if _, ok := c.Output(r.output); !ok {
				v.atValue(path, "step %q (component %s) has no output %q (outputs: %s)", r.step, c.Metadata.Name, r.output, ioNames(c.Outputs))
			}
		}
	}
}

// checkFinally reports a dependency of step self on step dep across the
// finally boundary: a finally step runs whatever the outcome of the other
// steps, so it depends on finally steps only, and no other step on it.
func (v *validator) checkFinally(path []any, self, dep int) bool {
	s, d := &v.p.Steps[self], &v.p.Steps[dep]
	switch {
	case s.Finally && !d.Finally && d.Loop != nil:
		v.atValue(path, "finally step %q cannot depend on the iterations of loop step %q: finally steps run after the other steps whatever their outcome (read {{run.status}} and {{run.failedSteps}} instead)", s.Name, d.Name)
	case s.Finally && !d.Finally:
		v.atValue(path, "finally step %q cannot depend on step %q: finally steps run after the other steps whatever their outcome (read {{run.status}} and {{run.failedSteps}} instead)", s.Name, d.Name)
	case !s.Finally && d.Finally:
		v.atValue(path, "step %q cannot depend on finally step %q: finally steps run after every other step", s.Name, d.Name)
	default:
		return true
	}
	return false
}

// loops reports whether the named step is a loop step.
func (v *validator) loops(step string) bool {
	s := v.p.Step(step)
	return s != nil && s.Loop != nil
}

// loop checks steps[i].loop and returns its items when the file gives them
// (a literal list, or the default of the parameter looped over), else nil.
func (v *validator) loop(i int, index map[string]int) []string {
	s := &v.p.Steps[i]
	if s.Loop == nil {
		return nil
	}
	if s.Finally {
		v.at(v.sp(i, "loop"), "a finally step cannot loop")
		return nil
	}
	if s.Loop.Parallelism < 0 || s.Loop.Parallelism > MaxParallelism {
		v.atValue(v.sp(i, "loop", "parallelism"), "expected 0 (no bound) to %d, got %d", MaxParallelism, s.Loop.Parallelism)
	}
	if s.Loop.Product.Kind != 0 {
		return v.product(i, index)
	}
	path := v.sp(i, "loop", "items")
	b, err := s.ItemsBinding()
	if err != nil {
		if s.Loop.Items.Kind == 0 {
			v.at(v.sp(i, "loop"), "%v", err)
		} else {
			v.atValue(path, "%v", err)
		}
		return nil
	}
	var list string
	switch {
	case b.Param != "":
		v.checkRefs(path, []ref{{param: b.Param}}, index, i)
		prm, ok := v.p.Params[b.Param]
		if !ok {
			return nil
		}
		if prm.Type != components.TypeJSON {
			v.atValue(path, "cannot loop over parameter %q: it is %s, expected json (a JSON list)", b.Param, prm.Type)
			return nil
		}
		if prm.Default.Kind == 0 {
			return nil
		}
		if list, err = components.NodeValue(prm.Type, &prm.Default); err != nil {
			return nil // reported with the parameter
		}
		if _, err := Items(list); err != nil {
			v.atValue(path, "cannot loop over parameter %q: its default: %v", b.Param, err)
			return nil
		}
	case b.Step != "":
		v.loopOutput(path, b, index, i)
		return nil
	default:
		list = b.Literal
	}
	items, err := Items(list)
	if err != nil {
		v.atValue(path, "%v", err)
		return nil
	}
	return items
}

// loopOutput checks a list a loop of steps[i] takes from a step's output
// (b, at path): a json output of a step that does not loop.
func (v *validator) loopOutput(path []any, b Binding, index map[string]int, i int) {
	v.checkRefs(path, []ref{{step: b.Step, output: b.Output}}, index, i)
	if v.loops(b.Step) {
		v.atValue(path, "cannot loop over output %q of loop step %q (a list of its iterations' outputs): loop over a json output of a step that does not loop", b.Output, b.Step)
	} else if out, ok := v.output(b.Step, b.Output); ok && out.Type != components.TypeJSON {
		v.atValue(path, "cannot loop over output %q of step %q: it is %s, expected json (a JSON list)", b.Output, b.Step, kfpv1.TypeName(out))
	}
}

// product checks steps[i].loop.product and returns its items when the
// file gives every list (written, or the default of the param), else nil.
func (v *validator) product(i int, index map[string]int) []string {
	s := &v.p.Steps[i]
	if s.Loop.Items.Kind != 0 {
		v.at(v.sp(i, "loop"), "loop has both items and product: expected one of them")
		return nil
	}
	lists, err := s.ProductLists()
	if err != nil {
		if pe, ok := err.(*ProductError); ok {
			v.atValue(v.sp(i, "loop", "product", pe.List), "%v", pe.Err)
		} else {
			v.atValue(v.sp(i, "loop", "product"), "%v", err)
		}
		return nil
	}
	given := make([][]string, len(lists))
	known := true
	for k, l := range lists {
		path := v.sp(i, "loop", "product", l.Name)
		list := l.Literal
		switch {
		case l.Item:
			continue
		case l.Step != "":
			v.loopOutput(path, l.Binding, index, i)
			known = false
			continue
		case l.Param != "":
			v.checkRefs(path, []ref{{param: l.Param}}, index, i)
			prm, ok := v.p.Params[l.Param]
			switch {
			case !ok:
				known = false
				continue
			case prm.Type != components.TypeJSON:
				v.atValue(path, "cannot loop over parameter %q: it is %s, expected json (a JSON list)", l.Param, prm.Type)
				known = false
				continue
			case prm.Default.Kind == 0:
				known = false
				continue
			}
			if list, err = components.NodeValue(prm.Type, &prm.Default); err != nil {
				known = false
				continue
			}
		}
		if given[k], err = Items(list); err != nil {
			v.atValue(path, "%v", err)
			known = false
		}
	}
	if !known {
		return nil
	}
	items, err := ProductItems(lists, given)
	if pe, ok := err.(*ProductError); ok {
		v.atValue(v.sp(i, "loop", "product", pe.List), "%v", pe.Err)
		return nil
	} else if err != nil {
		v.atValue(v.sp(i, "loop", "product"), "%v", err)
		return nil
	}
	return items
}

// checkItems reports {{item.FIELD}} references that an item the file
// gives lacks.
func (v *validator) checkItems(path []any, refs []ref, items []string) {
	for _, r := range refs {
		if !r.item || r.field == "" {
			continue
		}
		for k, it := range items {
			if _, err := ItemValue(it, r.field); err != nil {
				v.atValue(path, "unknown item field: item %d of the loop has no field %q (item %d: %s)", k, r.field, k, quoteShort(it))
				break
			}
		}
	}
}

func (v *validator) output(step, name string) (components.IO, bool) {
	for _, s := range v.p.Steps {
		if s.Name == step && s.Resolved != nil {
			return s.Resolved.Output(name)
		}
	}
	return components.IO{}, false
}

func (v *validator) stepNames() string {
	var n []string
	for _, s := range v.p.Steps {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

func (v *validator) paramNames() string {
	if len(v.p.ParamOrder) == 0 {
		return "none declared"
	}
	return strings.Join(v.p.ParamOrder, ", ")
}

func ioNames(ios []components.IO) string {
	if len(ios) == 0 {
		return "none"
	}
	var n []string
	for _, io := range ios {
		n = append(n, io.Name)
	}
	return strings.Join(n, ", ")
}

// cycles reports each dependency cycle once, naming its steps in order.
func (v *validator) cycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(name string) bool
	visit = func(name string) bool {
		color[name] = grey
		stack = append(stack, name)
		for _, d := range v.p.Deps(name) {
			switch color[d] {
			case grey:
				start := 0
				for k, s := range stack {
					if s == d {
						start = k
					}
				}
				cycle := append(append([]string{}, stack[start:]...), d)
				i := v.p.index(d)
				v.at(v.sp(i), "dependency cycle: %s (each step waits for the next)", strings.Join(cycle, " → "))
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[name] = black
		return false
	}
	for _, s := range v.p.Steps {
		if color[s.Name] == white {
			stack = stack[:0]
			if visit(s.Name) {
				return
			}
		}
	}
}

// index returns the position of the named step, or -1.
func (pl *Pipeline) index(name string) int {
	if i, ok := pl.byName[name]; ok && i < len(pl.Steps) && pl.Steps[i].Name == name {
		return i
	}
	for i, s := range pl.Steps {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Step returns the named step, or nil.
func (pl *Pipeline) Step(name string) *Step {
	if i := pl.index(name); i >= 0 {
		return &pl.Steps[i]
	}
	return nil
}

// StepNames lists the steps' names in order, comma-separated: what an
// error about a step the pipeline does not have offers instead.
func (pl *Pipeline) StepNames() string {
	names := make([]string, len(pl.Steps))
	for i, s := range pl.Steps {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// Bindings returns the parsed inputs of a step of a loaded pipeline, by input name.
func (s *Step) Bindings() map[string]Binding {
	out := map[string]Binding{}
	for name, n := range s.Inputs {
		t := components.TypeString
		if s.Resolved != nil {
			if in, ok := s.Resolved.Input(name); ok {
				t = in.ValueType()
			}
		}
		b, _, err := bindingOf(&n, t)
		if err == nil {
			out[name] = b
		}
	}
	return out
}

// Deps returns the steps the named step depends on, sorted (see Step.Deps).
func (pl *Pipeline) Deps(name string) []string {
	if s := pl.Step(name); s != nil {
		return s.Deps()
	}
	return nil
}

// Deps returns the steps s depends on, sorted: those whose outputs it uses
// (in inputs, when, or the metadata of an artifact param it reads) and
// those it names in after. It does not look at the
// other steps, so walking a whole pipeline's DAG stays linear.
func (s *Step) Deps() []string {
	set := map[string]bool{}
	for _, a := range s.After {
		set[a] = true
	}
	for _, g := range s.OneOfGroups() {
		for _, name := range g {
			set[name] = true
		}
	}
	for _, b := range s.Bindings() {
		if b.Step != "" {
			set[b.Step] = true
		}
		// A step output inside a longer text.
		if _, refs, err := parseRefs(b.Literal); b.Literal != "" && err == nil {
			for _, r := range refs {
				if r.step != "" {
					set[r.step] = true
				}
			}
		}
	}
	if s.Loop != nil {
		if b, err := s.ItemsBinding(); err == nil && b.Step != "" {
			set[b.Step] = true
		}
		lists, _ := s.ProductLists()
		for _, l := range lists {
			if l.Step != "" {
				set[l.Step] = true
			}
		}
	}
	for _, sec := range s.Secrets {
		if b := sec.Ref(); b.Step != "" {
			set[b.Step] = true
		}
	}
	for _, b := range s.Resources.Refs() {
		if b.Step != "" {
			set[b.Step] = true
		}
	}
	for _, d := range s.metaDeps {
		set[d] = true
	}
	if s.When != "" {
		if conds, _, err := ParseWhen(s.When); err == nil {
			for _, c := range conds {
				for _, b := range []Binding{c.Left, c.Right} {
					if b.Step != "" {
						set[b.Step] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// ResolveParams returns every parameter's value as written: overrides
// (name=value strings, type-checked) over defaults. A required parameter without a value
// or an unknown name is an error.
func (pl *Pipeline) ResolveParams(overrides map[string]string) (map[string]string, error) {
	var errs []error
	out := map[string]string{}
	for name, raw := range overrides {
		prm, ok := pl.Params[name]
		if !ok {
			errs = append(errs, fmt.Errorf("-p %s: pipeline %s has no parameter %q (params: %s)", name, pl.Metadata.Name, name, strings.Join(pl.ParamOrder, ", ")))
			continue
		}
		if components.IsArtifact(prm.Type) {
			// The URI of an artifact in the store, checked when a step
			// fetches it, or of an object the run imports first.
			if err := uris.CheckArtifactOrImportURI(raw); err != nil {
				errs = append(errs, fmt.Errorf("-p %s: expected the URI of an artifact (%s) in the artifact store or of an object to import: %v", name, prm.Type, err))
				continue
			}
		} else if err := components.CheckValue(prm.Type, raw); err != nil {
			errs = append(errs, fmt.Errorf("-p %s: %v", name, err))
			continue
		}
		out[name] = raw
	}
	for _, name := range pl.ParamOrder {
		if _, ok := out[name]; ok {
			continue
		}
		prm := pl.Params[name]
		if components.IsArtifact(prm.Type) && prm.Default.Kind != 0 {
			out[name] = prm.Default.Value
			continue
		}
		if components.IsArtifact(prm.Type) {
			errs = append(errs, fmt.Errorf("parameter %q is an artifact (%s): give it with -p %s=URI, the URI of an artifact in the artifact store (such as an output of an earlier run: pipectl artifacts ls RUN)", name, prm.Type, name))
			continue
		}
		if prm.Default.Kind == 0 {
			if _, bad := overrides[name]; !bad {
				errs = append(errs, fmt.Errorf("parameter %q (%s) has no default: give it with -p %s=VALUE", name, prm.Type, name))
			}
			continue
		}
		v, err := components.NodeValue(prm.Type, &prm.Default)
		if err != nil {
			errs = append(errs, fmt.Errorf("parameter %q: %v", name, err))
			continue
		}
		out[name] = v
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return out, errors.Join(errs...)
}

// ParseOverrides turns -p name=value flags into a map.
func ParseOverrides(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-p %q: expected name=value", f)
		}
		out[name] = value
	}
	return out, nil
}

// secretKeyRE is what a Kubernetes Secret's key may be.
var secretKeyRE = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// secrets checks steps[i].secrets: each a valid variable name, given once
// and not also by env, that pipectl does not set itself, from a Secret
// named as Kubernetes names Secrets, by a valid key.
func (v *validator) secrets(i int, index map[string]int) {
	s := &v.p.Steps[i]
	seen := map[string]bool{}
	for _, e := range s.Env {
		seen[e.Name] = true
	}
	if s.Resolved != nil {
		for _, e := range s.Resolved.Env {
			seen[e.Name] = true
		}
	}
	for j, sec := range s.Secrets {
		switch {
		case !components.ValidEnvName(sec.Env):
			v.atValue(v.sp(i, "secrets", j, "env"), "invalid environment variable name %q", sec.Env)
		case seen[sec.Env]:
			v.atValue(v.sp(i, "secrets", j, "env"), "variable %s is given twice (by the step's or the component's env, or another secret)", sec.Env)
		case reservedEnv(sec.Env):
			v.atValue(v.sp(i, "secrets", j, "env"), "variable %s is pipectl's own (PIPECTL_*, the store's AWS_* settings and the rank environment are set by pipectl)", sec.Env)
		}
		seen[sec.Env] = true
		if b, refs, err := parseBinding(sec.Secret); err != nil || len(refs) > 0 {
			switch prm, ok := v.p.Params[b.Param]; {
			case err == nil && b.Step != "":
				v.secretFromStep(i, j, b, refs, index)
			case err != nil || b.Param == "":
				v.atValue(v.sp(i, "secrets", j, "secret"), "expected a Secret's name, a whole {{params.NAME}} or {{steps.STEP.outputs.NAME}}, got %q", sec.Secret)
			case !ok:
				v.atValue(v.sp(i, "secrets", j, "secret"), "unknown parameter %q (params: %s)", b.Param, v.paramNames())
			case prm.Type != components.TypeString:
				v.atValue(v.sp(i, "secrets", j, "secret"), "parameter %q is %s: a Secret's name is a string", b.Param, prm.Type)
			}
		} else if msgs := validation.IsDNS1123Subdomain(sec.Secret); len(msgs) > 0 {
			v.atValue(v.sp(i, "secrets", j, "secret"), "invalid Secret name %q: %s", sec.Secret, strings.Join(msgs, "; "))
		}
		if len(sec.Key) > 253 || !secretKeyRE.MatchString(sec.Key) {
			v.atValue(v.sp(i, "secrets", j, "key"), "invalid Secret key %q: expected letters, digits, '-', '_' and '.' (at most 253)", sec.Key)
		}
	}
}

// reservedEnv reports whether pipectl sets the variable name itself in a
// step's program: PIPECTL_*, the store's AWS_* settings, the pod's own
// variables and the rank environment (PET_* too).
func reservedEnv(name string) bool {
	return strings.HasPrefix(name, wire.EnvPrefix) || strings.HasPrefix(name, wire.AWSPrefix) ||
		slices.Contains([]string{wire.EnvPodName, wire.EnvPodUID, wire.EnvPodNS}, name) || rankenv.Reserved(name)
}

// secretFromStep checks steps[i].secrets[j], whose Secret is named by step
// output b (refs its reference): a string output parameter of a step that
// does not loop, on a step that is not distributed (its launcher names its
// rank pods' Secrets when it starts, from the file or a param).
func (v *validator) secretFromStep(i, j int, b Binding, refs []ref, index map[string]int) {
	path := v.sp(i, "secrets", j, "secret")
	before := len(v.errs)
	v.checkRefs(path, refs, index, i)
	if len(v.errs) > before {
		return
	}
	switch out, ok := v.output(b.Step, b.Output); {
	case v.p.Steps[i].Distributed != nil:
		v.atValue(path, "a distributed step's Secret is named in the file or by a param, not by a step's output")
	case !ok:
	case v.loops(b.Step):
		v.atValue(path, "output %q of loop step %q is collected into a JSON list: a Secret's name is one value", b.Output, b.Step)
	case out.Type != components.TypeString:
		v.atValue(path, "output %q of step %q is %s: a Secret's name is a string", b.Output, b.Step, out.Type)
	}
}
