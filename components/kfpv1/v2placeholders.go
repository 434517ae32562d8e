package kfpv1

import (
	"fmt"
	"regexp"
	"sync"
)

// KFP v2 placeholders in the text of a KFP v1-format component file (as
// the KFP v2 SDK accepts them there), converted to pipectl's by the KFP
// names of the component's inputs and outputs:
//
//	{{$}}                                     {{executor.input}} (kfpv2_executor.go)
//	{{$.inputs.parameters['x']}}              {{inputs.x}}
//	{{$.inputs.artifacts['d'].path}}, .uri    {{inputs.d.path}}, {{inputs.d.uri}}
//	{{$.outputs.artifacts['m'].path}}, .uri   {{outputs.m.path}}, {{outputs.m.uri}}
//	{{$.outputs.parameters['p'].output_file}} {{outputs.p.path}}
//	{{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}  {{run.id}}
//	{{$.pipeline_task_name}}                  {{step.name}}
//
// and the argument {executorInput: ...} is {{executor.input}}.

var (
	v2InParamRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\.inputs\.parameters\['([^']+)'\]$`) })
	v2InArtRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\.inputs\.artifacts\['([^']+)'\]\.(path|uri)$`) })
	v2OutArtRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\.outputs\.artifacts\['([^']+)'\]\.(path|uri)$`) })
	v2OutParamRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\$\.outputs\.parameters\['([^']+)'\]\.output_file$`)
	})
	// v2ParamUseRE finds the inputs a text reads as values.
	v2ParamUseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*\$\.inputs\.parameters\['([^']+)'\]\s*\}\}`) })
)

// v2Placeholder converts the body of a KFP v2 placeholder {{BODY}}.
func (cv *kfpConverter) v2Placeholder(body string) (string, error) {
	lookup := func(ports map[string]kfpPort, kind, name string, param bool) (string, error) {
		p, ok := ports[name]
		switch {
		case !ok:
			return "", fmt.Errorf("{{%s}} names no %s of the component", body, kind)
		case p.param != param && param:
			return "", fmt.Errorf("{{%s}}: %s %q is an artifact: read it with {{$.inputs.artifacts['%s'].path}}", body, kind, name, name)
		case p.param != param:
			return "", fmt.Errorf("{{%s}}: %s %q is a parameter", body, kind, name)
		}
		return p.name, nil
	}
	if m := v2InParamRE().FindStringSubmatch(body); m != nil {
		n, err := lookup(cv.inputs, "input", m[1], true)
		return "{{inputs." + n + "}}", err
	}
	if m := v2InArtRE().FindStringSubmatch(body); m != nil {
		n, err := lookup(cv.inputs, "input", m[1], false)
		return "{{inputs." + n + "." + m[2] + "}}", err
	}
	if m := v2OutArtRE().FindStringSubmatch(body); m != nil {
		n, err := lookup(cv.outputs, "output", m[1], false)
		return "{{outputs." + n + "." + m[2] + "}}", err
	}
	if m := v2OutParamRE().FindStringSubmatch(body); m != nil {
		n, err := lookup(cv.outputs, "output", m[1], true)
		return "{{outputs." + n + ".path}}", err
	}
	switch body {
	case "$":
		return "{{executor.input}}", nil
	case "$.pipeline_job_name", "$.pipeline_job_uuid":
		return "{{run.id}}", nil
	case "$.pipeline_task_name":
		return "{{step.name}}", nil
	}
	return "", fmt.Errorf("KFP v2 placeholder {{%s}} is not supported (supported: {{$}}, {{$.inputs.parameters['NAME']}}, {{$.inputs.artifacts['NAME'].path|uri}}, {{$.outputs.artifacts['NAME'].path|uri}}, {{$.outputs.parameters['NAME'].output_file}}, {{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}, {{$.pipeline_task_name}})", body)
}
