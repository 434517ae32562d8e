package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"pipectl.dev/pipectl/pipeline"
)

// An artifact param's metadata (Wiring.Metadata) is a JSON object as
// written whose strings, keys and values, may embed {{params.NAME}} and
// {{steps.STEP.outputs.OUTPUT}}. At run time each such string gets the
// parameter's text, or the output's value as written, in place of the
// reference, as KFP's local runner fills in the placeholders of an
// importer's metadata; numbers, booleans and null stay as written. Keys are
// read in the order written: of two keys that become the same, the later
// one holds. The k-th of the step outputs the metadata of input NAME
// embeds (metadataOutputs: distinct, sorted) travels as the upstream value
// metadataKey(NAME, k), like any upstream value (Wiring.Upstream).

// metadataOutputs are the step outputs the strings of meta embed, each
// once, sorted by step and output.
func metadataOutputs(meta json.RawMessage) []OutputRef {
	var out []OutputRef
	_ = walkMetadata(meta, func(s string) (string, error) {
		_, refs, err := pipeline.LiteralParts(s)
		if err != nil {
			return s, nil // the loader reported it
		}
		for _, r := range refs {
			if r.Step != "" {
				out = append(out, OutputRef{Step: r.Step, Output: r.Output})
			}
		}
		return s, nil
	})
	slices.SortFunc(out, func(a, b OutputRef) int {
		return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(a.Output, b.Output))
	})
	return slices.Compact(out)
}

// metadataKey is the name the value of the k-th (from 1) step output that
// the metadata of input name embeds travels under (--upstream KEY=VALUE).
func metadataKey(name string, k int) string { return fmt.Sprintf("%s--meta%d", name, k) }

// metadataParams are the parameters the strings of meta embed, sorted.
func metadataParams(meta json.RawMessage) []string {
	var names []string
	_ = walkMetadata(meta, func(s string) (string, error) {
		_, refs, err := pipeline.LiteralParts(s)
		if err != nil {
			return s, nil // the loader reported it
		}
		for _, r := range refs {
			if r.Param != "" {
				names = append(names, r.Param)
			}
		}
		return s, nil
	})
	slices.Sort(names)
	return slices.Compact(names)
}

// resolveMetadata returns meta with the parameters its strings embed
// replaced by their values in params, and the step outputs by their values
// in outputs.
func resolveMetadata(meta json.RawMessage, params map[string]string, outputs map[OutputRef]string) (json.RawMessage, error) {
	out, err := decodeMetadata(meta, func(s string) (string, error) {
		texts, refs, err := pipeline.LiteralParts(s)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		for i, t := range texts {
			b.WriteString(t)
			if i == len(refs) {
				break
			}
			r := refs[i]
			if r.Step != "" {
				val, ok := outputs[OutputRef{Step: r.Step, Output: r.Output}]
				if !ok {
					return "", fmt.Errorf("no value for output %q of step %s", r.Output, r.Step)
				}
				b.WriteString(val)
				continue
			}
			if r.Param == "" {
				return "", fmt.Errorf("%q: metadata may embed {{params.NAME}} and {{steps.STEP.outputs.OUTPUT}} only", s)
			}
			val, ok := params[r.Param]
			if !ok {
				return "", fmt.Errorf("no value for pipeline parameter %q (want --param %s=VALUE)", r.Param, r.Param)
			}
			b.WriteString(val)
		}
		return b.String(), nil
	})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// walkMetadata calls f on every string of meta.
func walkMetadata(meta json.RawMessage, f func(string) (string, error)) error {
	_, err := decodeMetadata(meta, f)
	return err
}

// decodeMetadata decodes meta, a JSON object, with each string (key or
// value) replaced by f's result; numbers are json.Number, as written.
func decodeMetadata(meta json.RawMessage, f func(string) (string, error)) (any, error) {
	d := json.NewDecoder(bytes.NewReader(meta))
	d.UseNumber()
	v, err := decodeValue(d, f)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("metadata: more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("metadata: expected a JSON object")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, f func(string) (string, error)) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("metadata: %w", err)
				}
				k, err := f(kt.(string))
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, f)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			_, err := d.Token() // '}'
			return m, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := decodeValue(d, f)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token() // ']'
			return l, err
		}
		return nil, fmt.Errorf("metadata: unexpected %v", t)
	case string:
		return f(t)
	}
	return tok, nil
}
