package components

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseValue checks the string form s of a parameter of type t and returns
// its canonical form: ints and floats in Go's shortest form, bools as
// true/false, JSON compacted. It never interprets placeholders.
func ParseValue(t, s string) (string, error) {
	switch t {
	case TypeString, "":
		return s, nil
	case TypeInt:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return "", fmt.Errorf("expected a whole number (int), got %q", s)
		}
		return strconv.FormatInt(i, 10), nil
	case TypeFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("expected a number (float), got %q", s)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case TypeBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return "", fmt.Errorf("expected true or false (bool), got %q", s)
		}
		return strconv.FormatBool(b), nil
	case TypeJSON:
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return "", fmt.Errorf("expected JSON (json), got %q: %v", s, err)
		}
		b, _ := json.Marshal(v)
		return string(b), nil
	default:
		return "", fmt.Errorf("type %s takes no literal value", t)
	}
}

// NodeValue converts a literal YAML value to the canonical string form of a
// parameter of type t.
func NodeValue(t string, n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		if t == TypeJSON && n.Tag == "!!str" {
			return ParseValue(t, n.Value)
		}
		if t == TypeJSON {
			var v any
			if err := n.Decode(&v); err != nil {
				return "", err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			return string(b), nil
		}
		return ParseValue(t, n.Value)
	}
	if t != TypeJSON {
		return "", fmt.Errorf("expected a single %s value, got a %s", t, kindName(n))
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return "", fmt.Errorf("cannot express as JSON: %v", err)
	}
	return string(b), nil
}

func kindName(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return "list"
	}
	return "mapping"
}

// normalize turns yaml's map[string]any / map[any]any into JSON-friendly values.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	default:
		return v
	}
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
