package podutil

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Output formats for -o.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// CheckFormat validates an -o value.
func CheckFormat(f string) error {
	switch f {
	case FormatTable, FormatJSON, FormatYAML, "":
		return nil
	}
	return FlagErrorf("-o %s: expected table, json or yaml", f)
}

// PrintObjects prints Kubernetes objects in format (FormatJSON or
// FormatYAML): one object, or a List of several (several YAML documents).
func PrintObjects(w io.Writer, format string, objs []any) error {
	if format == FormatJSON {
		var v any = objs[0]
		if len(objs) > 1 {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
