package argo

import (
	"encoding/json"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"sigs.k8s.io/yaml"
)

// Marshal writes a compiled workflow as YAML, keys sorted, without the empty
// status and creationTimestamp the API types carry: the same workflow always
// gives the same bytes.
func Marshal(wf *wfv1.Workflow) ([]byte, error) {
	b, err := json.Marshal(wf)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	// Drop the empty fields the API types carry but a reader does not need.
	if spec, ok := m["spec"].(map[string]any); ok {
		dropEmpty(spec, "arguments")
		templates, _ := spec["templates"].([]any)
		for _, t := range templates {
			tm, _ := t.(map[string]any)
			dropEmpty(tm, "inputs", "outputs", "metadata")
			if c, ok := tm["container"].(map[string]any); ok {
				dropEmpty(c, "name", "resources")
			}
			inits, _ := tm["initContainers"].([]any)
			for _, c := range inits {
				if cm, ok := c.(map[string]any); ok {
					dropEmpty(cm, "resources")
				}
			}
		}
	}
	b, err = json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(b)
}

// dropEmpty deletes the keys of m whose values are "" or {}.
func dropEmpty(m map[string]any, keys ...string) {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if v == "" {
				delete(m, k)
			}
		case map[string]any:
			if len(v) == 0 {
				delete(m, k)
			}
		}
	}
}
