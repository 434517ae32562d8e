package trainer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// Doc is one document of a YAML file.
type Doc struct {
	Root             *yaml.Node
	APIVersion, Kind string
}

// IsTrainer reports whether the document is one of Trainer's.
func (d Doc) IsTrainer() bool { return d.APIVersion == APIVersion }

// IsRuntime reports whether the document is a runtime.
func (d Doc) IsRuntime() bool {
	return d.IsTrainer() && (d.Kind == KindClusterRuntime || d.Kind == KindRuntime)
}

// Docs splits data, the text of file, into its non-empty documents.
func Docs(file string, data []byte) ([]Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []Doc
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %v", file, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null" {
			continue
		}
		root := n.Content[0]
		d := Doc{Root: root}
		if v, _, ok := lookup(root, "apiVersion"); ok {
			d.APIVersion = v.Value
		}
		if v, _, ok := lookup(root, "kind"); ok {
			d.Kind = v.Value
		}
		docs = append(docs, d)
	}
}

// IsTrainJobFile reports whether data holds a TrainJob of Trainer's.
func IsTrainJobFile(data []byte) bool {
	if !bytes.Contains(data, []byte(APIVersion)) {
		return false
	}
	docs, err := Docs("", data)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(docs, func(d Doc) bool { return d.IsTrainer() && d.Kind == KindTrainJob })
}

// IsRuntimeFile reports whether data holds Trainer runtimes and no other
// document.
func IsRuntimeFile(data []byte) bool {
	if !bytes.Contains(data, []byte(APIVersion)) {
		return false
	}
	docs, err := Docs("", data)
	return err == nil && len(docs) > 0 && !slices.ContainsFunc(docs, func(d Doc) bool { return !d.IsRuntime() })
}

// Set is a collection of runtimes, by kind and name.
type Set struct {
	byKey map[string]*Runtime
	// Fallback, when set, finds the runtimes the set does not hold (the
	// cluster's); it returns nil, nil when there is none of that name.
	Fallback func(kind, name string) (*Runtime, error)
}

// Add adds r; a second runtime of the same kind and name is an error.
func (s *Set) Add(r *Runtime) error {
	if s.byKey == nil {
		s.byKey = map[string]*Runtime{}
	}
	key := r.Kind + "/" + r.Name
	if old, ok := s.byKey[key]; ok {
		e := &yamlfile.Error{File: r.File, Line: r.Line, Column: r.Column, Field: "metadata.name",
			Msg: fmt.Sprintf("%s %q is defined already at %s:%d", r.Kind, r.Name, old.File, old.Line)}
		return e
	}
	s.byKey[key] = r
	return nil
}

// Merge returns a set of s's runtimes and more's (more's replace s's of the same kind and name).
func (s *Set) Merge(more *Set) *Set {
	out := &Set{byKey: map[string]*Runtime{}}
	for _, from := range []*Set{s, more} {
		if from != nil && from.Fallback != nil {
			out.Fallback = from.Fallback
		}
		if from != nil {
			for k, r := range from.byKey {
				out.byKey[k] = r
			}
		}
	}
	return out
}

// Len is the number of runtimes in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.byKey)
}

// Names are the runtimes' "Kind/name", sorted.
func (s *Set) Names() []string {
	var out []string
	if s != nil {
		for k := range s.byKey {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Lookup finds the runtime called name of kind ("" for either: a
// ClusterTrainingRuntime first, as Trainer's runtimeRef defaults to).
func (s *Set) Lookup(kind, name string) (*Runtime, error) {
	if s != nil {
		for _, k := range []string{KindClusterRuntime, KindRuntime} {
			if kind != "" && k != kind {
				continue
			}
			if r, ok := s.byKey[k+"/"+name]; ok {
				return r, nil
			}
		}
		if s.Fallback != nil {
			r, err := s.Fallback(kind, name)
			if r != nil || err != nil {
				return r, err
			}
		}
	}
	what := "runtime"
	if kind != "" {
		what = kind
	}
	known := "no runtimes are loaded (give their files with --runtimes PATH, or list them under runtimes: in the pipeline)"
	if s.Len() > 0 {
		known = "the runtimes loaded are " + strings.Join(s.Names(), ", ")
	}
	if s != nil && s.Fallback != nil {
		known += "; the cluster has none of that name either"
	}
	return nil, fmt.Errorf("no %s named %q: %s", what, name, known)
}

// ReadRuntimes reads the runtimes of each path: a file, or a folder whose
// .yaml and .yml files (below it, at any depth) are read. In a folder,
// files and documents that are not runtimes are skipped; a file named
// must hold at least one.
func ReadRuntimes(paths []string) (*Set, error) {
	s := &Set{}
	var errs []error
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("runtimes %s: %w", p, unwrapPath(err)))
			continue
		}
		if !st.IsDir() {
			errs = append(errs, s.readFile(p, true))
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
				errs = append(errs, s.readFile(path, false))
			}
			return nil
		})
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

func (s *Set) readFile(path string, named bool) error {
	data, err := yamlfile.ReadBytes(path)
	if err != nil {
		return err
	}
	if !named && !bytes.Contains(data, []byte(APIVersion)) {
		return nil
	}
	docs, err := Docs(path, data)
	if err != nil {
		return err
	}
	n, errs := s.AddDocs(path, docs)
	if n == 0 && named && errs == nil {
		return fmt.Errorf("%s: no ClusterTrainingRuntime or TrainingRuntime (apiVersion %s) in this file", path, APIVersion)
	}
	return errs
}

// AddDocs adds the runtimes among docs of file, returning the problems
// found and how many there were.
func (s *Set) AddDocs(file string, docs []Doc) (int, error) {
	var errs []error
	n := 0
	for _, d := range docs {
		if !d.IsRuntime() {
			continue
		}
		n++
		r, err := ParseRuntime(file, d.Root)
		if err == nil {
			err = s.Add(r)
		}
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func joinErrs(errs []error) error { return errors.Join(errs...) }
