package pipeline

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
)

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
	// inline are the inline pipelines loaded, by node (inlinePipeline).
	inline map[*yaml.Node]inlineDecoded
	// metaRefs are the step outputs the metadata of artifact params
	// embed, by param (checkMetadata).
	metaRefs map[string][]metaRef
	// runtimes are the Trainer runtimes the steps may name besides those
	// the pipeline lists (LoadOptions.Runtimes, or the using pipeline's).
	runtimes *trainer.Set
	// runtimeCommands are the steps whose runtime has a command.
	runtimeCommands []runtimeCommand
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

// validate runs every check of the pipeline, in the order its problems
// are reported, then expand can run when none was found.
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
	v.params()
	v.distributedDefaults()
	if v.nMain == 0 {
		v.at(p("steps"), "missing: a pipeline needs at least one step")
	}
	index := v.stepIndex()
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

// stepIndex checks each step's name and resolves its component
// (component); it returns the steps' positions by name.
func (v *validator) stepIndex() map[string]int {
	pl := v.p
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
	return index
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
