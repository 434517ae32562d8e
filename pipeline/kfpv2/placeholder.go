package kfpv2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// KFP v2 placeholders in a container's command, args and env values, as
// pipectl placeholders:
//
//	{{$.inputs.parameters['x']}}              {{inputs.x}}
//	{{$.inputs.artifacts['d'].path}}          {{inputs.d.path}}
//	{{$.inputs.artifacts['d'].uri}}           {{inputs.d.uri}}
//	{{$.outputs.artifacts['m'].path}}         {{outputs.m.path}}
//	{{$.outputs.artifacts['m'].uri}}          {{outputs.m.uri}}
//	{{$.outputs.parameters['p'].output_file}} {{outputs.p.path}}: the program
//	                                          writes the value to that file
//	{{$.outputs.artifacts['m'].metadata}}     {}: the output artifact's
//	                                          metadata, empty when the program
//	                                          starts (as KFP's local runner
//	                                          gives it: the metadata JSON of
//	                                          the executor input's artifact)
//	{{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}
//	                                          {{run.id}}
//	{{$.pipeline_task_name}}                  {{step.name}}
//	{{$}}                                     {{executor.input}}: the executor
//	                                          input JSON (components/kfpv2_executor.go)
//
// A command or args element that is a JSON placeholder:
//
//	{"Concat": [ITEMS]}      one element, the items' texts joined (an item is
//	                         a string or a nested Concat)
//	{"IfPresent": {"InputName": "x", "Then": [ITEMS], "Else": [ITEMS]}}
//	                         the elements of Then when input x has a value
//	                         (given or its default), else those of Else: the
//	                         block {{if present inputs.x}} ... {{else}} ...
//	                         {{end}}; Then and Else may be one item
//
// Any other {{ in text is an error: pipectl would read it as a placeholder.

var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\$([^{}]*)\}\}`) })

var (
	inParamRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.inputs\.parameters\['([^']+)'\]$`) })
	inArtRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.inputs\.artifacts\['([^']+)'\]\.(path|uri)$`) })
	outArtRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.outputs\.artifacts\['([^']+)'\]\.(path|uri)$`) })
	outParamRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.outputs\.parameters\['([^']+)'\]\.output_file$`) })
	wholeInArtRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.inputs\.artifacts\['([^']+)'\]$`) })
	outMetaRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.outputs\.artifacts\['([^']+)'\]\.metadata$`) })
)

// ExecutorInputPlaceholder is the pipectl form of {{$}}.
const ExecutorInputPlaceholder = "{{executor.input}}"

// text converts the placeholders of one string.
func (cv *compConv) text(s string) (string, error) {
	var b strings.Builder
	rest := s
	for {
		loc := placeholderRE().FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		lit := rest[:loc[0]]
		if strings.Contains(lit, "{{") {
			return "", fmt.Errorf("text %q holds {{ outside a KFP placeholder, which pipectl would read as a placeholder", s)
		}
		b.WriteString(lit)
		body := rest[loc[2]:loc[3]]
		out, err := cv.placeholder(body)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		rest = rest[loc[1]:]
	}
	if strings.Contains(rest, "{{") {
		return "", fmt.Errorf("text %q holds {{ outside a KFP placeholder, which pipectl would read as a placeholder", s)
	}
	b.WriteString(rest)
	return b.String(), nil
}

// placeholder converts the body of {{$BODY}}.
func (cv *compConv) placeholder(body string) (string, error) {
	if m := inParamRE().FindStringSubmatch(body); m != nil {
		return "{{inputs." + cv.name(m[1]) + "}}", nil
	}
	if m := inArtRE().FindStringSubmatch(body); m != nil {
		return "{{inputs." + cv.name(m[1]) + "." + m[2] + "}}", nil
	}
	if m := outArtRE().FindStringSubmatch(body); m != nil {
		return "{{outputs." + cv.name(m[1]) + "." + m[2] + "}}", nil
	}
	if m := outParamRE().FindStringSubmatch(body); m != nil {
		return "{{outputs." + cv.name(m[1]) + ".path}}", nil
	}
	if m := outMetaRE().FindStringSubmatch(body); m != nil {
		// KFP's local runner gives the JSON of the output artifact's
		// metadata in the executor input, {} (pipectl's {{$}} too); its
		// cluster launcher leaves the placeholder as written.
		for _, o := range cv.outs {
			if o.name == m[1] && o.artifact {
				return "{}", nil
			}
		}
		return "", fmt.Errorf("placeholder {{$%s}}: the component has no output artifact %q", body, m[1])
	}
	switch body {
	case "":
		if cv.executorInput == nil {
			return "", fmt.Errorf("{{$}} (the executor input) is not supported")
		}
		return cv.executorInput()
	case ".pipeline_job_name", ".pipeline_job_uuid":
		return "{{run.id}}", nil
	case ".pipeline_task_name":
		return "{{step.name}}", nil
	}
	if m := wholeInArtRE().FindStringSubmatch(body); m != nil {
		return "", fmt.Errorf("placeholder {{$%s}} (the whole input artifact %q) is not supported: KFP's cluster launcher leaves it as written and its local runner fails on it (an IndexError in its placeholder resolution): read {{$}} (the executor input) or the input's .path", body, m[1])
	}
	return "", fmt.Errorf("placeholder {{$%s}} is not supported (supported: {{$.inputs.parameters['NAME']}}, {{$.inputs.artifacts['NAME'].path|uri}}, {{$.outputs.artifacts['NAME'].path|uri}}, {{$.outputs.parameters['NAME'].output_file}}, {{$.outputs.artifacts['NAME'].metadata}}, {{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}, {{$.pipeline_task_name}}, {{$}})", body)
}

// name is pipectl's name of a KFP input or output name: the same name
// (the component's checks report one pipectl cannot take).
func (cv *compConv) name(kfp string) string { return kfp }

// isJSONPlaceholder reports whether an element is a JSON placeholder.
func isJSONPlaceholder(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, `{"Concat"`) || strings.HasPrefix(t, `{"IfPresent"`)
}

// element converts one command or args element into the elements it
// stands for.
func (cv *compConv) element(s string) ([]string, error) {
	if !isJSONPlaceholder(s) {
		t, err := cv.text(s)
		return []string{t}, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON placeholder %q: %v", s, err)
	}
	return cv.jsonItem(v, false)
}

// jsonItem converts an item of a JSON placeholder: a string, a Concat or
// an IfPresent (not inside a Concat, inConcat).
func (cv *compConv) jsonItem(v any, inConcat bool) ([]string, error) {
	switch v := v.(type) {
	case string:
		t, err := cv.text(v)
		return []string{t}, err
	case json.Number:
		return []string{v.String()}, nil
	case map[string]any:
		if len(v) != 1 {
			return nil, fmt.Errorf("expected a placeholder of one key (Concat or IfPresent), got %d keys", len(v))
		}
		if items, ok := v["Concat"]; ok {
			list, ok := items.([]any)
			if !ok {
				return nil, fmt.Errorf("Concat: expected a list of items")
			}
			var b strings.Builder
			for _, it := range list {
				parts, err := cv.jsonItem(it, true)
				if err != nil {
					return nil, err
				}
				b.WriteString(strings.Join(parts, ""))
			}
			return []string{b.String()}, nil
		}
		if body, ok := v["IfPresent"]; ok {
			if inConcat {
				return nil, fmt.Errorf("an IfPresent inside a Concat is not supported")
			}
			return cv.ifPresent(body)
		}
		for k := range v {
			return nil, fmt.Errorf("unknown placeholder %q (expected Concat or IfPresent)", k)
		}
	}
	return nil, fmt.Errorf("expected a string or a placeholder (Concat, IfPresent), got %v", v)
}

// ifPresent converts the body of an IfPresent placeholder.
func (cv *compConv) ifPresent(body any) ([]string, error) {
	m, ok := body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("IfPresent: expected {InputName, Then, Else}")
	}
	name, ok := m["InputName"].(string)
	if !ok || name == "" {
		return nil, fmt.Errorf("IfPresent: missing InputName")
	}
	for k := range m {
		if k != "InputName" && k != "Then" && k != "Else" {
			return nil, fmt.Errorf("IfPresent: unknown field %q (expected InputName, Then, Else)", k)
		}
	}
	part := func(key string) ([]string, error) {
		var out []string
		items, present := m[key]
		if !present || items == nil {
			return nil, nil
		}
		list, ok := items.([]any)
		if !ok {
			list = []any{items}
		}
		for _, it := range list {
			elems, err := cv.jsonItem(it, false)
			if err != nil {
				return nil, fmt.Errorf("IfPresent.%s: %w", key, err)
			}
			out = append(out, elems...)
		}
		return out, nil
	}
	then, err := part("Then")
	if err != nil {
		return nil, err
	}
	els, err := part("Else")
	if err != nil {
		return nil, err
	}
	out := append([]string{"{{if present inputs." + cv.name(name) + "}}"}, then...)
	if len(els) > 0 {
		out = append(append(out, "{{else}}"), els...)
	}
	return append(out, "{{end}}"), nil
}

// compConv converts the placeholders of one component.
type compConv struct {
	ins, outs []ioDef
	// executorInput returns the pipectl form of {{$}}; nil when the
	// executor input is not supported.
	executorInput func() (string, error)
}
