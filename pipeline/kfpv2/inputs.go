package kfpv2

import (
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

// taskOutputParameter is the reference a taskOutputParameter (n, at
// field) stands for: the output of its producerTask (outputRef).
func (c *conv) taskOutputParameter(n *yaml.Node, field string) (string, bool) {
	o := c.fieldsOf(n, field, "a taskOutputParameter", []string{"producerTask", "outputParameterKey"}, nil)
	task, ok1 := c.scalarOf(o["producerTask"], field+".producerTask", "a task name")
	key, ok2 := c.scalarOf(o["outputParameterKey"], field+".outputParameterKey", "an output name")
	if !ok1 || !ok2 {
		return "", false
	}
	return c.outputRef(task, key, o["producerTask"], field+".producerTask")
}

// taskInputs converts a task's inputs into the step's inputs.
func (c *conv) taskInputs(n *yaml.Node, field, comp string) *yaml.Node {
	out := c.mapping(n, field)
	fs := c.fieldsOf(n, field, "task inputs", []string{"parameters", "artifacts"}, nil)
	// Constants holding placeholders of other task inputs (an f-string of
	// pipeline channels) are resolved once every input is known.
	var pending []pendingConst
	defer func() { c.channels(out, pending, comp) }()
	pk, pv := yamlfile.Pairs(fs["parameters"])
	for i, k := range pk {
		f := join(field, "parameters."+k.Value)
		s := c.fieldsOf(pv[i], f, "a task input parameter", []string{"componentInputParameter", "taskOutputParameter", "runtimeValue", "parameterExpressionSelector", "taskFinalStatus"}, nil)
		if tf := s["taskFinalStatus"]; tf != nil {
			o := c.fieldsOf(tf, f+".taskFinalStatus", "a taskFinalStatus", []string{"producerTask"}, nil)
			if task, ok := c.scalarOf(o["producerTask"], f+".taskFinalStatus.producerTask", "a task name"); ok {
				c.add(out, k.Value, k, f, c.str(finalStatus(task), tf, f+".taskFinalStatus"))
			}
			continue
		}
		if s["parameterExpressionSelector"] != nil && s["componentInputParameter"] == nil {
			c.errorf(s["parameterExpressionSelector"], f+".parameterExpressionSelector", "KFP parameterExpressionSelector is supported on a loop item only (a field of a ParallelFor item)")
			continue
		}
		switch {
		case s["componentInputParameter"] != nil:
			if v, ok := c.scalarOf(s["componentInputParameter"], f+".componentInputParameter", "an input name"); ok {
				if _, imported := c.importParam(v); imported && len(c.loops) == 0 && c.dagTasks == c.rootTasks && c.importedIn[comp][k.Value] == "" {
					c.errorf(s["componentInputParameter"], f+".componentInputParameter", "root input parameter %q is an importer's URI, an artifact param: pipectl cannot also give it as a value", v)
					continue
				}
				if len(c.loops) == 0 && c.omitted[v] {
					// Given by no task: the input has no value.
					c.at(s["componentInputParameter"], f+".componentInputParameter")
					continue
				}
				val, err := c.scoped(v, s["parameterExpressionSelector"])
				if err != nil {
					c.errorf(s["componentInputParameter"], f, "%v", err)
					continue
				}
				c.add(out, k.Value, k, f, c.str(val, s["componentInputParameter"], f+".componentInputParameter"))
			}
		case s["taskOutputParameter"] != nil:
			if ref, ok := c.taskOutputParameter(s["taskOutputParameter"], f+".taskOutputParameter"); ok {
				c.add(out, k.Value, k, f, c.str(ref, s["taskOutputParameter"], f+".taskOutputParameter"))
			}
		case s["runtimeValue"] != nil:
			r := c.fieldsOf(s["runtimeValue"], f+".runtimeValue", "a runtimeValue", []string{"constant"}, nil)
			v := r["constant"]
			switch {
			case v == nil:
				c.errorf(s["runtimeValue"], f+".runtimeValue", "missing: constant")
			case components.IsNull(v):
			case hasBraces(v):
				pending = append(pending, pendingConst{key: k, node: v, field: f})
			case v.Kind != yaml.ScalarNode && innerBraces(v) != nil:
				// A pipeline channel inside a list or struct (an f-string
				// in google-cloud-pipeline-components' worker_pool_specs):
				// its value in the constant's JSON text, as Vertex AI fills
				// it in (KFP's own driver passes the constant as written
				// and its launcher replaces it in the command line, or not,
				// by Go's map order).
				pending = append(pending, pendingConst{key: k, node: v, field: f})
			default:
				c.at(v, f+".runtimeValue.constant")
				if c.paramType(comp, k.Value) == "NUMBER_INTEGER" {
					v = wholeNumber(v)
				}
				c.add(out, k.Value, k, f, v)
			}
		}
	}
	ak, av := yamlfile.Pairs(fs["artifacts"])
	for i, k := range ak {
		f := join(field, "artifacts."+k.Value)
		s := c.fieldsOf(av[i], f, "a task input artifact", []string{"componentInputArtifact", "taskOutputArtifact"}, nil)
		switch {
		case s["componentInputArtifact"] != nil:
			if v, ok := c.scalarOf(s["componentInputArtifact"], f+".componentInputArtifact", "an input name"); ok {
				if len(c.loops) == 0 && c.omitted[v] {
					// Given by no task: the input has no value.
					c.at(s["componentInputArtifact"], f+".componentInputArtifact")
					continue
				}
				val, err := c.scoped(v, nil)
				if err != nil {
					c.errorf(s["componentInputArtifact"], f, "%v", err)
					continue
				}
				c.add(out, k.Value, k, f, c.str(val, s["componentInputArtifact"], f+".componentInputArtifact"))
			}
		case s["taskOutputArtifact"] != nil:
			o := c.fieldsOf(s["taskOutputArtifact"], f+".taskOutputArtifact", "a taskOutputArtifact", []string{"producerTask", "outputArtifactKey"}, nil)
			task, ok1 := c.scalarOf(o["producerTask"], f+".taskOutputArtifact.producerTask", "a task name")
			key, ok2 := c.scalarOf(o["outputArtifactKey"], f+".taskOutputArtifact.outputArtifactKey", "an output name")
			if ok1 && ok2 {
				if ref, ok := c.artifactRef(task, key, o["producerTask"], f+".taskOutputArtifact.producerTask"); ok {
					c.add(out, k.Value, k, f, c.str(ref, s["taskOutputArtifact"], f+".taskOutputArtifact"))
				}
			}
		}
	}
	return out
}

// hasBraces reports whether a string constant holds {{ (a structured
// constant is a JSON value, which pipectl never reads references in).
func hasBraces(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "{{")
}

// innerBraces is the first string below n holding {{, or nil.
func innerBraces(n *yaml.Node) *yaml.Node {
	if hasBraces(n) {
		return n
	}
	for _, e := range n.Content {
		if b := innerBraces(e); b != nil {
			return b
		}
	}
	return nil
}

// paramType is the parameterType of input parameter name of KFP component
// comp, or "".
func (c *conv) paramType(comp, name string) string {
	n, _, ok := yamlfile.Lookup(c.comps, comp, "inputDefinitions", "parameters", name, "parameterType")
	if !ok || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

var wholeFloatRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?[0-9]+\.0*$`) })

// wholeNumber is an integer's value as KFP holds it: the IR writes every
// number as a double (3.0), which is the integer 3.
func wholeNumber(n *yaml.Node) *yaml.Node {
	if n == nil || n.Kind != yaml.ScalarNode || !wholeFloatRE().MatchString(n.Value) {
		return n
	}
	m := *n
	m.Value, _, _ = strings.Cut(n.Value, ".")
	m.Tag = "!!int"
	return &m
}

// pendingConst is a string constant holding placeholders.
type pendingConst struct {
	key, node *yaml.Node
	field     string
}

// channels resolves the constants of pending, which hold placeholders of
// the task's other inputs (KFP's pipeline channels, "{{$.inputs.parameters
// ['pipelinechannel--x']}}", which its driver fills in): each becomes the
// reference its input is, "{{params.P}}" or "{{steps.S.outputs.O}}" (a
// task output's value inside the text). The channel inputs the component
// does not declare are then dropped from the step's inputs.
func (c *conv) channels(inputs *yaml.Node, pending []pendingConst, comp string) {
	used := map[string]bool{}
	for _, pc := range pending {
		text := pc.node.Value
		if pc.node.Kind != yaml.ScalarNode {
			js, err := components.NodeValue(components.TypeJSON, pc.node)
			if err != nil {
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "%v", err)
				continue
			}
			text = js
		}
		var b strings.Builder
		ok := true
		rest := text
		for ok {
			loc := placeholderRE().FindStringSubmatchIndex(rest)
			if loc == nil {
				break
			}
			b.WriteString(rest[:loc[0]])
			body := rest[loc[2]:loc[3]]
			m := inParamRE().FindStringSubmatch(body)
			var ref *yaml.Node
			if m != nil {
				ref, _, _ = yamlfile.Lookup(inputs, m[1])
			}
			switch {
			case body == ".pipeline_job_name" || body == ".pipeline_job_uuid" || body == ".pipeline_job_resource_name":
				// The run: pipectl's run id names it, is its id and its
				// Argo Workflow's name.
				b.WriteString("{{run.id}}")
			case body == ".pipeline_task_name" && c.taskName != "":
				b.WriteString(c.taskName)
			case body == ".pipeline_task_uuid" && c.atRoot:
				// KFP's driver gives the ML Metadata id of the DAG
				// execution the task runs in: at the root, the run's.
				b.WriteString("{{run.id}}")
			case body == ".pipeline_task_uuid":
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$.pipeline_task_uuid}} in a constant inside a sub-DAG or ParallelFor body is not supported: KFP's driver gives the ML Metadata id of the DAG execution the task runs in (a sub-DAG's, an iteration's), which pipectl has no counterpart of; at the root it is the run's id ({{$.pipeline_job_uuid}})")
				ok = false
			case m == nil:
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$%s}} in a constant is not supported yet (supported: {{$.inputs.parameters['NAME']}} of another input of the task, {{$.pipeline_job_name}}, {{$.pipeline_job_uuid}}, {{$.pipeline_job_resource_name}}, {{$.pipeline_task_name}}, {{$.pipeline_task_uuid}} at the root)", body)
				ok = false
			case ref == nil || ref.Kind != yaml.ScalarNode || !strings.HasPrefix(ref.Value, "{{"):
				c.errorf(pc.node, pc.field+".runtimeValue.constant", "placeholder {{$%s}}: the task has no input %q given by a pipeline input or a task output", rest[loc[2]:loc[3]], m[1])
				ok = false
			default:
				used[m[1]] = true
				b.WriteString(ref.Value)
			}
			rest = rest[loc[1]:]
		}
		if !ok {
			continue
		}
		if strings.Contains(rest, "{{") {
			c.errorf(pc.node, pc.field+".runtimeValue.constant", "a constant holding {{ outside a KFP placeholder is not supported (pipectl would read it as a reference)")
			continue
		}
		b.WriteString(rest)
		c.at(pc.node, pc.field+".runtimeValue.constant")
		c.add(inputs, pc.key.Value, pc.key, pc.field, c.str(b.String(), pc.node, pc.field+".runtimeValue.constant"))
	}
	if len(used) == 0 {
		return
	}
	kept := inputs.Content[:0]
	for i := 0; i+1 < len(inputs.Content); i += 2 {
		name := inputs.Content[i].Value
		if _, _, declared := yamlfile.Lookup(c.comps, comp, "inputDefinitions", "parameters", name); used[name] && !declared {
			continue
		}
		kept = append(kept, inputs.Content[i], inputs.Content[i+1])
	}
	inputs.Content = kept
}

// finalStatus is the value of a dsl.PipelineTaskFinalStatus input given by
// taskFinalStatus of task: the JSON object KFP gives, its state the run's
// status as a finally step reads it ({{run.status}}: Succeeded, Failed or
// Cancelled; KFP's driver writes the producer's ML Metadata state,
// COMPLETE, FAILED or CANCELED).
func finalStatus(task string) string {
	return `{"state": "{{run.status}}", "pipelineTaskName": "` + task + `", "error": {}}`
}
