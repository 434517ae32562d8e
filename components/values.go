package components

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// A parameter value is the text the user wrote. It is checked against its
// type and then passed on unchanged: to argv, env, the workflow arguments,
// the run record. See doc.go ("Values as written") for what each type
// accepts and how a json value written as YAML becomes JSON text.

var (
	// intText is an optionally signed run of decimal digits, of any length.
	intText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[+-]?[0-9]+$`) })
	// floatText is a decimal number with optional fraction and exponent.
	floatText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	})
	// jsonNumber is a number as JSON writes it (RFC 8259 section 6).
	jsonNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`) })
)

// maxJSONText bounds the JSON text made from a YAML value, whose aliases
// could otherwise expand it without limit.
const maxJSONText = 16 << 20

// maxJSONDepth bounds the nesting of lists and mappings in a json value.
const maxJSONDepth = 1000

// CheckValue reports whether s is a value of parameter type t. Surrounding
// spaces are allowed for int, float and bool (the value itself keeps them).
// It never interprets placeholders.
func CheckValue(t, s string) error {
	v := strings.TrimSpace(s)
	switch t {
	case TypeString, "":
		return nil
	case TypeInt:
		if !intText().MatchString(v) {
			return fmt.Errorf("expected a whole number (int), got %q", s)
		}
	case TypeFloat:
		f, err := strconv.ParseFloat(v, 64)
		if !floatText().MatchString(v) || err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("expected a finite decimal number (float), got %q", s)
		}
	case TypeBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("expected true or false (bool), got %q", s)
		}
	case TypeJSON:
		if d := jsonDepth(s); d > MaxJSONDepth {
			return fmt.Errorf("expected JSON (json) nested at most %d deep, got a value nested %d deep (%d bytes)", MaxJSONDepth, d, len(s))
		}
		if err := checkJSON(s); err != nil {
			return fmt.Errorf("expected JSON (json), got %q: %v", s, err)
		}
	default:
		return fmt.Errorf("type %s takes no literal value", t)
	}
	return nil
}

// MaxJSONDepth is how deep a json value may nest: Go's encoding/json reads
// no deeper.
const MaxJSONDepth = 10000

// jsonDepth is the deepest nesting of arrays and objects in s, read as
// JSON text (brackets inside strings do not count).
func jsonDepth(s string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func checkJSON(s string) error {
	if json.Valid([]byte(s)) {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// Canonical returns the form of a value of type t used to compare values
// (a step's when): ints as decimal without sign or leading zeros, floats in
// Go's shortest form, bools as true/false, JSON re-encoded compactly with
// sorted keys and numbers as float64 (as written when no float64 holds
// them), strings trimmed. The program never
// sees this form.
func Canonical(t, s string) (string, error) {
	if err := CheckValue(t, s); err != nil {
		return "", err
	}
	v := strings.TrimSpace(s)
	switch t {
	case TypeInt:
		i, _ := new(big.Int).SetString(strings.TrimPrefix(v, "+"), 10)
		return i.String(), nil
	case TypeFloat:
		f, _ := strconv.ParseFloat(v, 64)
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case TypeBool:
		b, _ := strconv.ParseBool(v)
		return strconv.FormatBool(b), nil
	case TypeJSON:
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			// Valid JSON with a number no float64 holds (1e700): its
			// numbers stay as written.
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			if dec.Decode(&x) != nil {
				return "", err
			}
		}
		b, err := json.Marshal(x)
		return string(b), err
	default:
		return v, nil
	}
}

// Equal reports whether a and b are the same value of type t: equal
// canonical forms, or equal trimmed text when either is not of type t.
func Equal(t, a, b string) bool {
	ca, errA := Canonical(t, a)
	cb, errB := Canonical(t, b)
	if errA != nil || errB != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return ca == cb
}

// IsNull reports whether n is YAML null (null, ~, or nothing): a default or
// input written so counts as not given.
func IsNull(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// NodeValue returns the text of a literal YAML value of parameter type t,
// checked against t: a scalar's text as written; for json, a YAML string
// as written (it must hold JSON) and any other YAML value as JSON text
// that keeps key order and each scalar's text (see doc.go).
func NodeValue(t string, n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if hint := yamlfile.QuoteHint(n); hint != "" {
		return "", fmt.Errorf("expected a single %s value, got a mapping%s", t, hint)
	}
	if t == TypeJSON && !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str") {
		var b bytes.Buffer
		if err := writeJSON(&b, n, true, map[*yaml.Node]bool{}); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("expected a single %s value, got a %s", t, KindName(n))
	}
	if err := CheckValue(t, n.Value); err != nil {
		return "", err
	}
	return n.Value, nil
}

// KindName names the kind of a YAML node that is not a scalar, for messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	}
	return "document"
}

// writeJSON appends n as compact JSON text to b. top is false inside a
// mapping or list, where problems name their line and column. open are the
// lists and mappings being written around n: an alias to one of them
// would never end (a: &x [*x]).
func writeJSON(b *bytes.Buffer, n *yaml.Node, top bool, open map[*yaml.Node]bool) error {
	if b.Len() > maxJSONText {
		return fmt.Errorf("the value is longer than %d bytes as JSON (aliases expanded)", maxJSONText)
	}
	at := func(format string, args ...any) error { return posErr(n, top, format, args...) }
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		if len(open) >= maxJSONDepth {
			return at("nested more than %d deep", maxJSONDepth)
		}
		open[n] = true
		defer delete(open, n)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return at("unknown alias")
		}
		if open[n.Alias] {
			return at("the alias *%s refers to a value that holds it: it never ends", n.Value)
		}
		return writeJSON(b, n.Alias, top, open)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e, false, open); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				return posErr(k, false, "a json object key must be a single value (no lists, mappings or << merge keys)")
			}
			if seen[k.Value] {
				return posErr(k, false, "duplicate key %q", k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1], false, open); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str", "!!timestamp":
			writeString(b, n.Value)
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			switch n.Value {
			case "true", "True", "TRUE":
				b.WriteString("true")
			case "false", "False", "FALSE":
				b.WriteString("false")
			default:
				return at("%q is not a JSON true or false (quote it to make it a string)", n.Value)
			}
		case "!!int", "!!float":
			if !jsonNumber().MatchString(n.Value) {
				return at("%q is not a JSON number (write it as one, like 12, -0.5 or 1e-3, or quote it to make it a string)", n.Value)
			}
			b.WriteString(n.Value)
		default:
			return at("a value tagged %s has no JSON form", tag)
		}
		return nil
	}
	return at("expected a JSON value")
}

// posErr is a problem with n; inside a json value it names n's line and
// column, as the caller reports the position of the whole value.
func posErr(n *yaml.Node, top bool, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if !top {
		msg = fmt.Sprintf("line %d column %d: %s", n.Line, n.Column, msg)
	}
	return errors.New(msg)
}

// writeString appends s as a JSON string, escaping only what JSON requires
// (and U+2028, U+2029); <, > and & stay as they are.
func writeString(b *bytes.Buffer, s string) {
	if plainString(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)         // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// Assignable reports whether a value of type from may feed an input of type to.
func Assignable(from, to string) bool {
	switch {
	case from == to:
		return true
	case IsArtifact(from) && to == TypeArtifact, from == TypeArtifact && IsArtifact(to):
		return true
	case IsParam(from) && to == TypeString:
		return true
	case from == TypeInt && to == TypeFloat:
		return true
	}
	return false
}

// plainString reports whether s is printable ASCII without " and \\, so
// JSON writes it as it is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
