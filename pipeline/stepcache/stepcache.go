package stepcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/inputs"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Key is the store key of a fingerprint's entry.
func Key(fp string) string { return ".cache/" + fp + ".json" }

// Entry records which step of which run produced a fingerprint's outputs.
type Entry struct {
	Run     string                `json:"run"`
	Step    string                `json:"step"`
	Created time.Time             `json:"created"`
	Outputs []record.OutputRecord `json:"outputs"`
}

// Shape is the gang shape of a distributed step (zero for one process).
type Shape struct {
	Nodes, Procs int
	// Framework is the step's distributed.framework ("" for torch, so a
	// torch step's fingerprint is what it was before frameworks).
	Framework string
}

// Fingerprint identifies a step's work (see the package doc): the component
// spec (image and code digest included; for a component whose code is not
// shipped, the files its command names in the component's directory), the
// resolved parameter values, the input artifacts' sha256
// (inputSums, by input name) and the gang shape.
func Fingerprint(ctx context.Context, inv *components.Invocation, inputSums map[string]string, shape Shape) (string, error) {
	// Inputs fed by artifacts (KFP passes an artifact to an input parameter
	// by its content) and collected inputs count by their sha256, in
	// inputSums.
	c := *inv.Component
	c.Inputs = slices.DeleteFunc(slices.Clone(c.Inputs), func(in components.ProgramIO) bool {
		_, fed := inv.Inputs[in.Name]
		_, collected := inv.Collected[in.Name]
		return fed || collected
	})
	params, err := c.ParamValues(inv.Params)
	if err != nil {
		return "", err
	}
	files := map[string]string{}
	for _, arg := range append(append([]string{}, inv.Component.Command...), inv.Component.Args...) {
		if arg == "" || filepath.IsAbs(arg) || inv.Component.Dir == "" || inv.Component.Code != "" {
			continue
		}
		p := filepath.Join(inv.Component.Dir, inv.Component.WorkingDir, arg)
		sum, err := artifacts.FileSum(ctx, p)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err != nil {
			continue // not a regular file: an ordinary argument
		}
		files[arg] = sum
	}
	doc := struct {
		Component fpComponent       `json:"component"`
		Files     map[string]string `json:"files"`
		Params    map[string]string `json:"params"`
		Inputs    map[string]string `json:"inputs"`
		Env       []string          `json:"env"`
		Nodes     int               `json:"nodes,omitempty"`
		Procs     int               `json:"procs,omitempty"`
		Framework string            `json:"framework,omitempty"`
		// Metadata (an imported artifact's, KFP's importer metadata)
		// reaches the program in its executor input.
		Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
	}{fingerprintForm(inv.Component, inv.Image), files, params, inputSums, inv.Env, shape.Nodes, shape.Procs, shape.Framework, inv.Metadata}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// fpComponent is the form a program takes in the fingerprint: the JSON
// field names and order of the component spec pipectl hashed before
// components.Program existed, so that a cache filled by an earlier pipectl
// is still hit. A change here changes every fingerprint (every step then
// misses the cache once); TestFingerprintForm holds it.
type fpComponent struct {
	APIVersion string
	Kind       string
	Metadata   struct {
		Name, Description string
		Labels            map[string]string
	}
	Inputs, Outputs []fpIO
	Image           string
	Command, Args   []string
	Env             []struct{ Name, Value string }
	WorkingDir      string
	Code            string `json:"code,omitempty"`
}

type fpIO struct {
	Name, Type, Description string
	Optional, KFP           bool
	KFPType, Path           string
}

func fingerprintForm(p *components.Program, image string) fpComponent {
	f := fpComponent{APIVersion: components.APIVersion, Kind: "Component", Image: image,
		Command: p.Command, Args: p.Args, WorkingDir: p.WorkingDir, Code: p.Code}
	f.Metadata.Name = p.Name
	for _, in := range p.Inputs {
		f.Inputs = append(f.Inputs, fpIO{Name: in.Name, Type: in.Type, Optional: in.Optional})
	}
	for _, out := range p.Outputs {
		f.Outputs = append(f.Outputs, fpIO{Name: out.Name, Type: out.Type, Path: out.Path})
	}
	for _, e := range p.Env {
		f.Env = append(f.Env, struct{ Name, Value string }{e.Name, e.Value})
	}
	return f
}

// Lookup returns the entry of fp when every artifact it names is still
// complete in the store: its metadata records the same sha256 and every
// object it lists is there with its size.
func Lookup(ctx context.Context, s artifacts.Store, fp string) (Entry, bool) {
	var e Entry
	if err := artifacts.GetJSON(ctx, s, Key(fp), &e); err != nil {
		return e, false
	}
	for _, o := range e.Outputs {
		if o.URI == "" {
			continue
		}
		key, err := artifacts.SplitURI(s, o.URI)
		if err != nil {
			return e, false
		}
		meta, err := artifacts.ReadMetadata(ctx, s, key)
		if err != nil || meta.SHA256 != o.SHA256 || !present(ctx, s, key, meta) {
			return e, false
		}
	}
	return e, true
}

// present tells whether the objects of the output at key are all in the
// store with the sizes its metadata records. (Their bytes are checked
// against their sha256 by whoever downloads them: artifacts.Fetch.)
func present(ctx context.Context, s artifacts.Store, key string, meta artifacts.Metadata) bool {
	if meta.Kind != artifacts.KindDirectory {
		info, err := s.Stat(ctx, key)
		return err == nil && info.Size == meta.Size
	}
	for _, f := range meta.Files {
		if info, err := s.Stat(ctx, key+"/"+f.Path); err != nil || info.Size != f.Size {
			return false
		}
	}
	return true
}

// Record writes the entry of fp.
func Record(ctx context.Context, s artifacts.Store, fp string, e Entry) error {
	e.Created = time.Now().UTC()
	return artifacts.PutJSON(ctx, s, Key(fp), e)
}

// Reuse makes the entry step's outcome in run: it writes the step's
// outputs record (the entry's outputs, marked as reused from the entry's
// run) and, with paramsDir set, the output parameters' files for Argo
// (execution.WriteOutputParams).
func Reuse(ctx context.Context, s artifacts.Store, run, step, paramsDir string, e Entry) error {
	if err := recordstore.WriteStepOutputs(ctx, s, record.StepOutputs{Run: run, Step: step, Outputs: e.Outputs, CachedFrom: e.Run}); err != nil {
		return fmt.Errorf("reuse the outputs of run %s: %w", e.Run, err)
	}
	if paramsDir != "" {
		return execution.WriteOutputParams(paramsDir, e.Outputs)
	}
	return nil
}

// ResolveAll looks every step up before a run starts (`pipectl run --on
// argo`): each step's fingerprint as its pod would compute it (no component
// directory; the cluster's gang shape), with the parameter values params
// and, for inputs fed by upstream steps, the outputs of their entries. It
// returns every step's entry when all of them are cached; ok is false as
// soon as one is not, or cannot be known before it runs (a loop, a finally
// step, a when, cache: false, trigger: completed).
func ResolveAll(ctx context.Context, s artifacts.Store, steps []*plan.Step, run string, params map[string]string) (entries map[string]Entry, ok bool, err error) {
	entries = map[string]Entry{}
	for len(entries) < len(steps) {
		progress := false
		for _, sp := range steps {
			if _, done := entries[sp.Name]; done {
				continue
			}
			if slices.ContainsFunc(sp.Deps, func(d string) bool { _, ok := entries[d]; return !ok }) {
				continue // an upstream step is not resolved yet
			}
			e, ok, err := resolve(ctx, s, sp, run, params, entries)
			if err != nil || !ok {
				return nil, false, err
			}
			entries[sp.Name], progress = e, true
		}
		if !progress {
			return nil, false, nil
		}
	}
	return entries, true, nil
}

// resolve looks one step up with its upstream steps' entries.
func resolve(ctx context.Context, s artifacts.Store, sp *plan.Step, run string, params map[string]string, upstream map[string]Entry) (Entry, bool, error) {
	w := sp.Wiring
	if sp.Loop != nil || sp.Finally || sp.When != nil || !sp.Cache || len(w.Collected) > 0 || len(w.OneOf) > 0 || len(w.OrDefault) > 0 {
		return Entry{}, false, nil
	}
	output := func(ref plan.OutputRef) (record.OutputRecord, bool) {
		e := upstream[ref.Step]
		i := slices.IndexFunc(e.Outputs, func(o record.OutputRecord) bool { return o.Name == ref.Output })
		if i < 0 {
			return record.OutputRecord{}, false
		}
		return e.Outputs[i], true
	}
	v := plan.Values{Run: run, Params: params, Upstream: map[string]string{}, Artifacts: map[string]string{}}
	sums := map[string]string{}
	for name, ref := range w.Upstream {
		o, ok := output(ref)
		if !ok || o.Value == nil {
			return Entry{}, false, nil
		}
		v.Upstream[name] = *o.Value
	}
	for name, ref := range w.Inputs {
		o, ok := output(ref)
		if !ok || o.URI == "" {
			return Entry{}, false, nil
		}
		v.Artifacts[name], sums[name] = o.URI, o.SHA256
	}
	if inputs.AddParamInputs(ctx, s, w, params, v.Artifacts, sums) != nil {
		return Entry{}, false, nil
	}
	c := *sp.Component
	c.Dir = "" // as in the pod: no component directory
	inv, err := w.Invocation(&c, s, v)
	if err != nil {
		return Entry{}, false, err
	}
	inv.Image = sp.Image
	var shape Shape
	if d := sp.Distributed; d != nil {
		shape = Shape{Nodes: d.Nodes, Procs: d.ProcsPerNode, Framework: string(d.Framework)}
	}
	fp, err := Fingerprint(ctx, inv, sums, shape)
	if err != nil {
		return Entry{}, false, err
	}
	e, ok := Lookup(ctx, s, fp)
	return e, ok, nil
}
