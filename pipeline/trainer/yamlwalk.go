package trainer

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// walker reads one document of a Trainer file, collecting what it finds
// at the lines it finds it.
type walker struct {
	file string
	// errs are the problems that make the file fail to load; refused the
	// fields pipectl cannot honour (reported when the object is used);
	// warns the fields it ignores.
	errs, refused []error
	warns         []string
}

func (w *walker) at(n *yaml.Node, field, format string, args ...any) *yamlfile.Error {
	e := &yamlfile.Error{File: w.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

func (w *walker) errorf(n *yaml.Node, field, format string, args ...any) {
	w.errs = append(w.errs, w.at(n, field, format, args...))
}

func (w *walker) refuse(n *yaml.Node, field, format string, args ...any) {
	w.refused = append(w.refused, w.at(n, field, format, args...))
}

func (w *walker) warn(n *yaml.Node, field, format string, args ...any) {
	w.warns = append(w.warns, w.at(n, field, format, args...).Error())
}

// ignore is a handler for a field read and not used, with a warning
// saying why.
func (w *walker) ignore(why string) func(k, v *yaml.Node, field string) {
	return func(k, _ *yaml.Node, field string) { w.warn(k, field, "ignored: %s", why) }
}

// skip is a handler for a field that changes nothing (metadata).
func skip(_, _ *yaml.Node, _ string) {}

// fields walks mapping n at field, calling each key's handler; a key
// without one is refused when known (a field of the Kubernetes type
// known describes, when not nil) and an error otherwise.
func (w *walker) fields(n *yaml.Node, field string, handlers map[string]func(k, v *yaml.Node, field string), known reflect.Type) {
	n = yamlfile.Deref(n)
	if n.Kind != yaml.MappingNode {
		w.errorf(n, field, "expected a mapping, got %s", describe(n))
		return
	}
	keys, values := yamlfile.Pairs(n)
	for i, k := range keys {
		sub := join(field, k.Value)
		if h, ok := handlers[k.Value]; ok {
			h(k, yamlfile.Deref(values[i]), sub)
			continue
		}
		if known != nil && slices.Contains(jsonFields(known), k.Value) {
			w.refuse(k, sub, "not supported by pipectl (it cannot honour this field of %s)", known.Name())
			continue
		}
		names := make([]string, 0, len(handlers))
		for name := range handlers {
			names = append(names, name)
		}
		slices.Sort(names)
		w.errorf(k, sub, "unknown field %q (expected one of: %s)", k.Value, strings.Join(names, ", "))
	}
}

// jsonFields are the json names of t's fields (inline structs included).
func jsonFields(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			names = append(names, jsonFields(f.Type)...)
			continue
		}
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func (w *walker) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		w.errorf(n, field, "expected a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

// count reads a non-negative int32 (numNodes, numProcPerNode).
func (w *walker) count(n *yaml.Node, field string) int {
	v, err := strconv.ParseInt(n.Value, 10, 32)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v < 1 {
		w.errorf(n, field, "expected a whole number of at least 1, got %s", describe(n))
		return 0
	}
	return int(v)
}

func (w *walker) strings(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		w.errorf(n, field, "expected a list of strings, got %s", describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		out = append(out, w.str(yamlfile.Deref(c), fmt.Sprintf("%s[%d]", field, i)))
	}
	return out
}

func (w *walker) stringMap(n *yaml.Node, field string) map[string]string {
	if n.Kind != yaml.MappingNode {
		w.errorf(n, field, "expected a mapping of strings, got %s", describe(n))
		return nil
	}
	out := map[string]string{}
	keys, values := yamlfile.Pairs(n)
	for i, k := range keys {
		out[k.Value] = w.str(yamlfile.Deref(values[i]), join(field, k.Value))
	}
	return out
}

// list calls each for every item of sequence n at field.
func (w *walker) list(n *yaml.Node, field string, each func(i int, item *yaml.Node, field string)) {
	if n.Kind != yaml.SequenceNode {
		w.errorf(n, field, "expected a list, got %s", describe(n))
		return
	}
	for i, c := range n.Content {
		each(i, yamlfile.Deref(c), fmt.Sprintf("%s[%d]", field, i))
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

func join(field, k string) string {
	if field == "" {
		return k
	}
	return field + "." + k
}
