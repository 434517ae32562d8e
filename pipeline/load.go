package pipeline

import (
	"errors"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/trainer"
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
	return ParseWith(path, data, LoadOptions{})
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
	var base *trainer.Set
	if len(chain) > 0 {
		base = chain[len(chain)-1].runtimes
	}
	return decodeIn(f, chain, decoded, base)
}

// decodeIn is decodeWith, with the runtimes the steps of f may name
// besides those f lists.
func decodeIn(f *yamlfile.File, chain []chainLink, decoded func(*Pipeline), runtimes *trainer.Set) (*Pipeline, error) {
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
		chain: append(slices.Clip(chain), chainLink{path: f.Path, abs: absPath(f.Path)}), subs: map[int]*Pipeline{}, subFiles: map[string]*Pipeline{}, inline: map[*yaml.Node]inlineDecoded{}, metaRefs: map[string][]metaRef{}, runtimes: runtimes}
	v.applyRuntimes()
	v.validate()
	v.runtimeCommandWarnings()
	v.mpiCommandWarnings()
	if decodeErr == nil && len(v.errs) == 0 {
		v.expand()
	}
	if decodeErr != nil || len(v.errs) > 0 {
		return nil, errors.Join(append([]error{decodeErr}, v.errs...)...)
	}
	return p, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
