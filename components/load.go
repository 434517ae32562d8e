package components

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// Load reads and validates the pipectl Component (apiVersion
// pipectl.dev/v1alpha1) in the file at path. (Package kfpv1 reads KFP v1
// component files too.)
func Load(path string) (*Component, error) {
	f, err := yamlfile.Read(path)
	if err != nil {
		return nil, err
	}
	return Decode(f, f.Root, "")
}

// Decode decodes and validates the component held by node n of file f (the
// file's root, or an inline component in a pipeline, whose dotted path is field).
func Decode(f *yamlfile.File, n *yaml.Node, field string) (*Component, error) {
	if n.Kind != yaml.MappingNode {
		return nil, f.Errorf(n, field, "expected a component: a mapping with apiVersion %s and kind Component", APIVersion)
	}
	c := &Component{}
	if err := f.Decode(n, field, c); err != nil {
		return nil, err
	}
	c.Source, c.Dir = f.Path, filepath.Dir(f.Path)
	if err := c.validate(f, n, field, c.APIVersion != "" || field == ""); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Component) validate(f *yamlfile.File, n *yaml.Node, field string, checkHeader bool) error {
	var errs []error
	at := func(path ...any) (*yaml.Node, string) {
		v, k, _ := yamlfile.Lookup(n, path...)
		if k != nil {
			v = k
		}
		return v, JoinField(field, path...)
	}
	add := func(format string, args []any, path ...any) {
		node, fp := at(path...)
		errs = append(errs, f.Errorf(node, fp, format, args...))
	}
	if checkHeader {
		if c.APIVersion != APIVersion {
			add("expected apiVersion %s, got %q", []any{APIVersion, c.APIVersion}, "apiVersion")
		}
		if c.Kind != "Component" {
			add("expected kind Component, got %q", []any{c.Kind}, "kind")
		}
	}
	if c.Metadata.Name == "" {
		add("missing: every component needs metadata.name", nil, "metadata")
	} else if want := ValidDNSLabel(c.Metadata.Name); want != "" {
		add("invalid name %q: expected %s", []any{c.Metadata.Name, want}, "metadata", "name")
	}
	for _, list := range []string{"inputs", "outputs"} {
		ios := c.Inputs
		if list == "outputs" {
			ios = c.Outputs
		}
		seen := map[string]bool{}
		for i, io := range ios {
			switch {
			case io.Name == "":
				add("missing name", nil, list, i)
			case ValidIdent(io.Name) != "":
				add("invalid name %q: expected %s", []any{io.Name, ValidIdent(io.Name)}, list, i, "name")
			case seen[io.Name]:
				add("duplicate %s name %q", []any{strings.TrimSuffix(list, "s"), io.Name}, list, i, "name")
			}
			seen[io.Name] = true
			if !IsParam(io.Type) && !IsArtifact(io.Type) {
				add("unknown type %q (expected one of: %s)", []any{io.Type, TypeList()}, list, i, "type")
				continue
			}
			if io.HasDefault() {
				if list == "outputs" || IsArtifact(io.Type) {
					add("only input parameters take a default", nil, list, i, "default")
				} else if _, err := NodeValue(io.Type, &io.Default); err != nil {
					add("invalid default: %v", []any{err}, list, i, "default")
				}
			}
		}
	}
	if len(c.Command) == 0 {
		add("missing: the program to run, as a list (argv, no shell)", nil, "command")
	}
	for _, list := range []string{"command", "args"} {
		items := c.Command
		if list == "args" {
			items = c.Args
		}
		if i, err := c.signature().checkList(items, true); err != nil {
			add("%v", []any{err}, list, i)
		}
	}
	for i, e := range c.Env {
		if !ValidEnvName(e.Name) {
			add("invalid environment variable name %q", []any{e.Name}, "env", i, "name")
		}
		if _, err := c.signature().checkList([]string{e.Value}, false); err != nil {
			add("%v", []any{err}, "env", i, "value")
		}
	}
	return errors.Join(errs...)
}

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ValidEnvName reports whether name is a valid environment variable name.
func ValidEnvName(name string) bool { return envNameRE().MatchString(name) }

// JoinField renders a dotted field path below field.
func JoinField(field string, path ...any) string {
	s := field
	for _, p := range path {
		switch p := p.(type) {
		case int:
			s += fmt.Sprintf("[%d]", p)
		case string:
			if s != "" {
				s += "."
			}
			s += p
		}
	}
	return s
}

// FieldPath renders a dotted field path, e.g. FieldPath("steps", 1, "inputs") is steps[1].inputs.
func FieldPath(path ...any) string { return JoinField("", path...) }
