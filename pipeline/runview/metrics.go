package runview

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Metric is one named value of a Metrics output, as written (a JSON number
// keeps its digits).
type Metric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ParseMetrics reads a Metrics output: a JSON object whose scalar leaves are
// the metrics (nested keys joined with "."), or Kubeflow Pipelines v1's
// {"metrics": [{"name": …, "numberValue": …}]}. ok is false when data is
// not a JSON object.
func ParseMetrics(data []byte) (ms []Metric, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || dec.More() {
		return nil, false
	}
	if list, isList := top["metrics"].([]any); isList && len(top) == 1 {
		if kfp, ok := kfpMetrics(list); ok {
			return kfp, true
		}
	}
	flatten("", top, &ms)
	slices.SortStableFunc(ms, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return ms, true
}

func kfpMetrics(list []any) ([]Metric, bool) {
	var out []Metric
	for _, e := range list {
		m, ok := e.(map[string]any)
		name, nameOK := m["name"].(string)
		if !ok || !nameOK {
			return nil, false
		}
		v, has := m["numberValue"]
		if !has {
			return nil, false
		}
		out = append(out, Metric{Name: name, Value: scalar(v)})
	}
	return out, true
}

func flatten(prefix string, v any, out *[]Metric) {
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			flatten(name, e, out)
		}
		return
	}
	*out = append(*out, Metric{Name: prefix, Value: scalar(v)})
}

// scalar renders a decoded JSON value: numbers as written, strings bare,
// anything else as compact JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}
