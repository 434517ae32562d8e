package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/regular"
)

// Error is one problem in a spec file.
type Error struct {
	// File is the file's path as given by the user.
	File string
	// Line and Column are 1-based; 0 when unknown.
	Line, Column int
	// Field is the dotted path of the field, e.g. steps[1].inputs.epochs.
	Field string
	// Msg says what is wrong and what was expected.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// File is a parsed YAML document.
type File struct {
	// Path is the file's path as given by the user.
	Path string
	// Root is the document's top node (a mapping for a valid spec).
	Root *yaml.Node
}

// MaxSize is the largest spec file Read accepts, in bytes.
const MaxSize = 16 << 20

// Read parses the YAML file at path. It must be a regular file of at most
// MaxSize bytes: a named pipe, a device or a directory is an *Error, and
// reading never blocks or fills memory.
func Read(path string) (*File, error) {
	data, err := ReadBytes(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// ReadBytes reads the spec file at path as Read does, without parsing it:
// a file that is not regular or is over MaxSize bytes is an *Error.
func ReadBytes(path string) ([]byte, error) {
	data, err := regular.Read(path, MaxSize)
	if err != nil {
		return nil, &Error{File: path, Msg: unwrapPath(err).Error()}
	}
	return data, nil
}

// unwrapPath drops the operation and path of a *fs.PathError: the caller
// names the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`) })

// Parse parses data as the YAML document of the file named path. The file
// must be UTF-8 text without control characters other than tab, CR and LF,
// and hold exactly one document, a mapping.
func Parse(path string, data []byte) (*File, error) {
	if err := checkText(path, data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: path, Line: 1, Column: 1, Msg: "the file holds no YAML (it is empty or only comments): expected a mapping with apiVersion and kind"}
		}
		return nil, syntaxError(path, data, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if isEmpty(root) {
		return nil, &Error{File: path, Line: max(doc.Line, 1), Column: max(doc.Column, 1), Msg: "the document is empty: expected a mapping with apiVersion and kind"}
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: root.Line, Column: root.Column, Msg: "expected a mapping with apiVersion and kind at the top of the file"}
	}
	// One document per file: a second one would be silently ignored.
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(path, data, err)
		}
		n := &next
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if !isEmpty(n) {
			return nil, &Error{File: path, Line: n.Line, Column: n.Column, Msg: "a second YAML document (after ---): a file holds one pipeline or component; put each in its own file"}
		}
	}
	return &File{Path: path, Root: root}, nil
}

// isEmpty reports whether n is an empty document's null (nothing written).
func isEmpty(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == ""
}

// syntaxError locates a yaml.v3 parse error ("yaml: line N: ...").
func syntaxError(path string, data []byte, err error) *Error {
	msg := err.Error()
	e := &Error{File: path, Line: 1, Column: 1}
	if m := lineRE().FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	hint := tabHint(data, e.Line)
	if hint == "" {
		if line, col, h := indentHint(data, e.Line, msg); h != "" {
			e.Line, e.Column, hint = line, col, h
		}
	}
	e.Msg = "invalid YAML: " + msg + hint
	return e
}

// checkText reports the first byte of data that is not UTF-8 text a YAML
// file may hold (control characters other than tab, LF and CR, a NUL, or
// a byte sequence that is not UTF-8), at its line and column (in
// characters, 1-based). A UTF-8 byte order mark is allowed.
func checkText(path string, data []byte) error {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		var what string
		switch {
		case r == utf8.RuneError && size <= 1:
			what = fmt.Sprintf("byte 0x%02X is not UTF-8 text", data[i])
		case r == 0:
			what = "a NUL byte (0x00): this is not a text file"
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7F:
			what = fmt.Sprintf("control character U+%04X is not allowed in YAML", r)
		case r == 0xFEFF && i > 0:
			what = "a byte order mark (U+FEFF) inside the file"
		}
		if what != "" {
			return &Error{File: path, Line: line, Column: col, Msg: what + " (pipectl reads UTF-8 YAML)"}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else if r != 0xFEFF {
			col++
		}
		i += size
	}
	return nil
}

// Errorf returns an error located at node n (nil n means the file itself).
func (f *File) Errorf(n *yaml.Node, field, format string, args ...any) *Error {
	e := &Error{File: f.Path, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// Pairs returns the keys and values of a mapping node, in file order
// (none for any other node).
func Pairs(n *yaml.Node) (keys, values []*yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys, values = append(keys, n.Content[i]), append(values, n.Content[i+1])
	}
	return keys, values
}

// Lookup returns the value node at path below n (string keys for mappings,
// int indices for sequences) and the key node naming it (nil for indices).
// When the path does not exist it returns the deepest node that does, with
// ok false (a nil n has no path below it).
func Lookup(n *yaml.Node, path ...any) (value, key *yaml.Node, ok bool) {
	value = n
	if n == nil {
		return nil, nil, len(path) == 0
	}
	value = Deref(value)
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if value.Kind != yaml.MappingNode {
				return value, key, false
			}
			found := false
			for i := 0; i+1 < len(value.Content); i += 2 {
				if value.Content[i].Value == p {
					key, value, found = value.Content[i], value.Content[i+1], true
					break
				}
			}
			if !found {
				return value, key, false
			}
		case int:
			if value.Kind != yaml.SequenceNode || p < 0 || p >= len(value.Content) {
				return value, key, false
			}
			key, value = nil, value.Content[p]
		}
		value = Deref(value)
	}
	return value, key, true
}

// Deref is the node an alias (*name) refers to, n itself for any other.
func Deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// Decode checks n strictly against the type of out and decodes it. Every
// problem is returned, joined, each located in f. field is the dotted path
// of n used in messages ("" for the top).
func (f *File) Decode(n *yaml.Node, field string, out any) error {
	var errs []error
	f.check(n, reflect.TypeOf(out).Elem(), field, &errs)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := n.Decode(out); err != nil {
		return f.decodeError(err, field)
	}
	return nil
}

var nodeType = reflect.TypeOf(yaml.Node{})
var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

func (f *File) check(n *yaml.Node, t reflect.Type, field string, errs *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if t == nodeType {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			msg := err.Error()
			if m := lineRE().FindStringSubmatch(msg); m != nil {
				msg = m[2]
			}
			*errs = append(*errs, f.Errorf(n, field, "%s", msg))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
				*errs = append(*errs, f.Errorf(n, field, "expected a mapping, got %s", describe(n)))
			}
			return
		}
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sf, ok := fields[k.Value]
			if !ok {
				*errs = append(*errs, f.Errorf(k, join(field, k.Value), "unknown field %q%s (expected one of: %s)", k.Value, didYouMean(k.Value, slices.Collect(maps.Keys(fields))), strings.Join(slices.Sorted(maps.Keys(fields)), ", ")))
				continue
			}
			f.check(v, sf.Type, join(field, k.Value), errs)
		}
	case reflect.Slice:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		if n.Kind != yaml.SequenceNode {
			*errs = append(*errs, f.Errorf(n, field, "expected a list, got %s", describe(n)))
			return
		}
		for i, c := range n.Content {
			f.check(c, t.Elem(), fmt.Sprintf("%s[%d]", field, i), errs)
		}
	case reflect.Map:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		if n.Kind != yaml.MappingNode {
			*errs = append(*errs, f.Errorf(n, field, "expected a mapping, got %s", describe(n)))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if seen[k] {
				*errs = append(*errs, f.Errorf(n.Content[i], join(field, k), "duplicate key %q", k))
			}
			seen[k] = true
			f.check(n.Content[i+1], t.Elem(), join(field, k), errs)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			*errs = append(*errs, f.Errorf(n, field, "expected a %s, got %s", scalarName(t), describe(n)))
			return
		}
		if n.Tag == "!!null" {
			return
		}
		var v = reflect.New(t)
		if isInt(t) && n.ShortTag() != "!!int" {
			// yaml.v3 truncates a float into an integer field (1.5 is 1):
			// a whole number is written as one.
			*errs = append(*errs, f.Errorf(n, field, "expected a %s, got %q", scalarName(t), n.Value))
			return
		}
		if err := n.Decode(v.Interface()); err != nil {
			*errs = append(*errs, f.Errorf(n, field, "expected a %s, got %q", scalarName(t), n.Value))
		}
	}
}

// isInt reports whether t is an integer type.
func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func scalarName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "string"
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping" + QuoteHint(n)
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func join(field, k string) string {
	if field == "" {
		return k
	}
	return field + "." + k
}

func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range Fields(t) {
		out[f.Name] = f.Field
	}
	return out
}

// Field is one field a YAML mapping decoded into a struct may hold.
type Field struct {
	// Name is the field's key in the file.
	Name  string
	Field reflect.StructField
}

// Fields lists the fields a mapping decoded into the struct type t may
// hold, in the struct's order (inline structs' fields in their place):
// the fields Decode accepts, and no others.
func Fields(t reflect.Type) []Field {
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			out = append(out, Fields(sf.Type)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		out = append(out, Field{Name: name, Field: sf})
	}
	return out
}

// decodeError turns yaml.v3's "line N: ..." decode errors into located ones.
func (f *File) decodeError(err error, field string) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return &Error{File: f.Path, Field: field, Msg: err.Error()}
	}
	var errs []error
	for _, m := range te.Errors {
		e := &Error{File: f.Path, Field: field, Msg: m}
		if sub := lineRE().FindStringSubmatch(m); sub != nil {
			e.Line, _ = strconv.Atoi(sub[1])
			e.Column = 1
			e.Msg = sub[2]
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Split lists the errors joined (errors.Join) in err, depth first.
func Split(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Split(e)...)
		}
		return out
	}
	return []error{err}
}
