package pipeline

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// FieldDoc documents one field of a pipeline or component file for
// `pipectl explain`. The field itself (its name, and its type unless Type
// says otherwise) comes from the Go types the loader decodes into.
type FieldDoc struct {
	// Type replaces the type the Go type gives, for a field that takes
	// more than one form (a path or an inline component).
	Type string
	// Default is what an unset field means, "" when it means nothing.
	Default string
	// Values are the values the field accepts, when there is a fixed set.
	Values []string
	// Required: the loader refuses a file without the field.
	Required bool
	// Doc is one paragraph of plain text.
	Doc string
}

// Field is one field of the schema, as `pipectl explain` shows it.
type Field struct {
	// Path is the field's dotted path from its root, e.g.
	// pipeline.steps.distributed.stallTimeout.
	Path string
	// Name is its key in the file.
	Name string
	// Type is how its value is written: string, integer, number, boolean,
	// duration, object, []T, map[string]T, or the doc's own Type.
	Type string
	FieldDoc
	// Fields are the fields of an object (or of a list's or map's
	// objects), in file order.
	Fields []*Field
}

// The roots of the schema: the two kinds of file.
const (
	RootPipeline  = "pipeline"
	RootComponent = "component"
)

// schemaRoots are the Go types a file of each kind decodes into.
var schemaRoots = map[string]reflect.Type{
	RootPipeline:  reflect.TypeOf(Pipeline{}),
	RootComponent: reflect.TypeOf(components.Component{}),
}

// schemaLinks are the fields of type yaml.Node whose mapping form is a
// schema of its own: a step's inline component.
var schemaLinks = map[string]string{
	"pipeline.steps.component":   RootComponent,
	"pipeline.finally.component": RootComponent,
}

// docAliases document a subtree with another's entries: the fields below
// a key are documented by the entries below its value (an entry of their
// own wins).
var docAliases = [][2]string{
	{"pipeline.finally", "pipeline.steps"},
	{"pipeline.steps.component", RootComponent},
	{"pipeline.steps.distributed.resources", "pipeline.steps.resources"},
	{"pipeline.steps.distributed.tolerations", "pipeline.steps.tolerations"},
	{"component.outputs", "component.inputs"},
}

// docFor returns the documentation of the field at path.
func docFor(path string) (FieldDoc, bool) {
	if d, ok := fieldDocs[path]; ok {
		return d, true
	}
	for _, a := range docAliases {
		if rest, ok := strings.CutPrefix(path, a[0]+"."); ok {
			return docFor(a[1] + "." + rest)
		}
	}
	return FieldDoc{}, false
}

var durationType = reflect.TypeOf(Duration{})
var nodeType = reflect.TypeOf(yaml.Node{})
var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// Schema returns the tree of fields of a root (RootPipeline or
// RootComponent), every field the loader accepts, with its doc.
func Schema(root string) (*Field, error) {
	t, ok := schemaRoots[root]
	if !ok {
		return nil, fmt.Errorf("unknown root %q: expected %s or %s", root, RootPipeline, RootComponent)
	}
	f := &Field{Path: root, Name: root, Type: "object"}
	f.FieldDoc, _ = docFor(root)
	f.Fields = schemaFields(root, t, 0)
	return f, nil
}

// schemaFields lists the fields of the object type t at path (its
// elements' for a list or map).
func schemaFields(path string, t reflect.Type, depth int) []*Field {
	t = elem(t)
	// Fields the loader checks as a whole, as yamlfile does: any YAML
	// (yaml.Node) or a type that decodes itself.
	if t.Kind() != reflect.Struct || t == nodeType || reflect.PointerTo(t).Implements(unmarshalerType) || depth > 8 {
		return nil
	}
	var out []*Field
	for _, yf := range yamlfile.Fields(t) {
		p := path + "." + yf.Name
		f := &Field{Path: p, Name: yf.Name, Type: typeName(yf.Field.Type)}
		f.FieldDoc, _ = docFor(p)
		if f.FieldDoc.Type != "" {
			f.Type = f.FieldDoc.Type
		}
		if root, ok := schemaLinks[p]; ok {
			f.Fields = schemaFields(p, schemaRoots[root], depth+1)
		} else {
			f.Fields = schemaFields(p, yf.Field.Type, depth+1)
		}
		out = append(out, f)
	}
	return out
}

// elem is the object type under lists, maps and pointers.
func elem(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			t = t.Elem()
		default:
			return t
		}
	}
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return "duration"
	case t == nodeType:
		return "any"
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return "string"
	}
	switch t.Kind() {
	case reflect.Slice:
		return "[]" + typeName(t.Elem())
	case reflect.Map:
		return "map[string]" + typeName(t.Elem())
	case reflect.Struct:
		return "object"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return "string"
}

// Explain returns the field at path: "pipeline.steps.distributed",
// "component.inputs.type", or a path under the pipeline without its root
// ("steps.distributed.stallTimeout"). A list's or map's fields are those
// of its elements (steps.name, params.type).
func Explain(path string) (*Field, error) {
	parts := strings.Split(strings.Trim(path, "."), ".")
	root := RootPipeline
	if _, ok := schemaRoots[parts[0]]; ok {
		root, parts = parts[0], parts[1:]
	}
	f, err := Schema(root)
	if err != nil {
		return nil, err
	}
	for _, name := range parts {
		var next *Field
		var names []string
		for _, c := range f.Fields {
			names = append(names, c.Name)
			if c.Name == name {
				next = c
			}
		}
		if next == nil {
			if len(names) == 0 {
				return nil, fmt.Errorf("%s has no fields: %s is a %s", f.Path, f.Path, f.Type)
			}
			return nil, fmt.Errorf("field %q does not exist in %s%s (its fields: %s)", name, f.Path, yamlfile.DidYouMean(name, names), strings.Join(names, ", "))
		}
		f = next
	}
	return f, nil
}

// SchemaPaths lists the path of every field of both roots, depth first.
func SchemaPaths() []string {
	var out []string
	var walk func(*Field)
	walk = func(f *Field) {
		out = append(out, f.Path)
		for _, c := range f.Fields {
			walk(c)
		}
	}
	for _, root := range slices.Sorted(maps.Keys(schemaRoots)) {
		f, _ := Schema(root)
		walk(f)
	}
	return out
}
