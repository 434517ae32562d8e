package kfpv2

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// platformExecutor maps the kubernetes platform spec of executor label
// (n, at field): tolerations and nodeSelector; anything else is an error.
func (c *conv) platformExecutor(label string, n *yaml.Node, field string) {
	keys, values := yamlfile.Pairs(n)
	for i, k := range keys {
		f := field + "." + k.Value
		c.at(k, f)
		switch k.Value {
		case "tolerations":
			list := c.seq(values[i], f)
			for j, t := range values[i].Content {
				tf := f + "[" + strconv.Itoa(j) + "]"
				fs := c.fieldsOf(t, tf, "a toleration", []string{"key", "operator", "value", "effect"}, map[string]string{
					"tolerationJson":    " (tolerations given at run time)",
					"tolerationSeconds": "",
				})
				m := c.mapping(t, tf)
				for _, name := range []string{"key", "operator", "value", "effect"} {
					if v := fs[name]; v != nil {
						c.add(m, name, v, tf+"."+name, c.str(v.Value, v, tf+"."+name))
					}
				}
				list.Content = append(list.Content, m)
			}
			c.extra[label] = append(c.extra[label], c.str("tolerations", k, f), list)
		case "nodeSelector":
			fs := c.fieldsOf(values[i], f, "a nodeSelector", []string{"labels"}, map[string]string{"nodeSelectorJson": " (a node selector given at run time)"})
			if l := fs["labels"]; l != nil {
				m := c.mapping(l, f+".labels")
				lk, lv := yamlfile.Pairs(l)
				for j, key := range lk {
					c.add(m, key.Value, key, f+".labels."+key.Value, c.str(lv[j].Value, lv[j], f+".labels."+key.Value))
				}
				c.extra[label] = append(c.extra[label], c.str("nodeSelector", k, f), m)
			}
		case "podMetadata":
			c.podMetadata(label, values[i], f)
			c.extra[label] = append(c.extra[label], c.str("podMetadata", k, f), c.podMeta[label].node)
		case "fieldPathAsEnv":
			// Converted once the executor's podMetadata is known
			// (fieldEnv).
			if values[i].Kind != yaml.SequenceNode {
				c.errorf(values[i], f, "expected a list of fieldPathAsEnv entries")
				continue
			}
			if c.fieldPaths == nil {
				c.fieldPaths = map[string]platformEntry{}
			}
			c.fieldPaths[label] = platformEntry{values[i], f}
		case "secretAsEnv":
			// Converted with each task that runs the executor: a Secret
			// named by an input is named in that task's scope (secrets).
			if values[i].Kind != yaml.SequenceNode {
				c.errorf(values[i], f, "expected a list of secretAsEnv entries")
				continue
			}
			for j, e := range values[i].Content {
				if c.secretEnv == nil {
					c.secretEnv = map[string][]platformEntry{}
				}
				c.secretEnv[label] = append(c.secretEnv[label], platformEntry{e, f + "[" + strconv.Itoa(j) + "]"})
			}
		default:
			c.errorf(k, f, "KFP kubernetes platform spec %q is not supported (executor %s)%s", k.Value, label, platformWhy[k.Value])
		}
	}
}

// podMeta is the podMetadata of an executor: pipectl's node, and the
// labels and annotations by key.
type podMeta struct {
	node                *yaml.Node
	labels, annotations map[string]string
}

// podMetadata converts the podMetadata of executor label (n, at field):
// its labels and annotations, each a map of text.
func (c *conv) podMetadata(label string, n *yaml.Node, field string) {
	fs := c.fieldsOf(n, field, "a podMetadata", []string{"labels", "annotations"}, nil)
	pm := podMeta{node: c.mapping(n, field), labels: map[string]string{}, annotations: map[string]string{}}
	for _, what := range []string{"labels", "annotations"} {
		m := fs[what]
		if m == nil {
			continue
		}
		wf := field + "." + what
		if m.Kind != yaml.MappingNode {
			c.errorf(m, wf, "expected a mapping of keys to text")
			continue
		}
		out := c.mapping(m, wf)
		keys, values := yamlfile.Pairs(m)
		for j, k := range keys {
			kf := wf + "." + k.Value
			v, ok := c.scalarOf(values[j], kf, "text")
			if !ok {
				continue
			}
			c.add(out, k.Value, k, kf, c.str(v, values[j], kf))
			if what == "labels" {
				pm.labels[k.Value] = v
			} else {
				pm.annotations[k.Value] = v
			}
		}
		c.add(pm.node, what, m, wf, out)
	}
	if c.podMeta == nil {
		c.podMeta = map[string]podMeta{}
	}
	c.podMeta[label] = pm
}

// fieldPathRE is a fieldPathAsEnv fieldPath pipectl gives: a label or an
// annotation of the pod.
var fieldPathRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`) })

// fieldEnv converts the fieldPathAsEnv entries of each executor into the
// env of the steps running it: a label's or an annotation's value is the
// one the executor's podMetadata gives the pod, "" when it gives none (as
// Kubernetes gives a key the pod does not have), the same locally and in
// the pod. A key with a prefix (DOMAIN/NAME) the podMetadata does not set
// is an error: KFP's and Argo's own labels and annotations are such keys,
// which pipectl's pods do not have. Other field paths are errors.
func (c *conv) fieldEnv() {
	for _, label := range slices.Sorted(maps.Keys(c.fieldPaths)) {
		e := c.fieldPaths[label]
		pm := c.podMeta[label]
		env := c.seq(e.n, e.field)
		for j, item := range e.n.Content {
			f := e.field + "[" + strconv.Itoa(j) + "]"
			fs := c.fieldsOf(item, f, "a fieldPathAsEnv entry", []string{"name", "fieldPath"}, nil)
			name, ok1 := c.scalarOf(fs["name"], f+".name", "a variable name")
			path, ok2 := c.scalarOf(fs["fieldPath"], f+".fieldPath", "a field path")
			if !ok1 || !ok2 {
				if fs["name"] == nil || fs["fieldPath"] == nil {
					c.errorf(item, f, "missing: name and fieldPath")
				}
				continue
			}
			m := fieldPathRE().FindStringSubmatch(path)
			if m == nil {
				c.errorf(fs["fieldPath"], f+".fieldPath", "field path %q is not supported: pipectl gives a pod's label or annotation the executor's podMetadata sets (metadata.labels['KEY'], metadata.annotations['KEY']); the same step runs as a process locally, with no pod's name, namespace or node (read {{$.pipeline_task_name}} or {{$.pipeline_job_name}} instead)", path)
				continue
			}
			set := pm.labels
			if m[1] == "annotations" {
				set = pm.annotations
			}
			val, given := set[m[2]]
			if !given && strings.Contains(m[2], "/") {
				c.errorf(fs["fieldPath"], f+".fieldPath", "%s %q is not set by the executor's podMetadata: a key with a prefix may be one KFP or Argo gives its pods, which pipectl's do not have", strings.TrimSuffix(m[1], "s"), m[2])
				continue
			}
			if strings.Contains(val, "{{") {
				c.errorf(fs["fieldPath"], f+".fieldPath", "the value of %s %q holds {{, which pipectl would read as a reference", strings.TrimSuffix(m[1], "s"), m[2])
				continue
			}
			env.Content = append(env.Content, c.mapping(item, f, c.str("name", fs["name"], f+".name"), c.str(name, fs["name"], f+".name"), c.str("value", fs["fieldPath"], f+".fieldPath"), c.str(val, fs["fieldPath"], f+".fieldPath")))
		}
		if len(env.Content) > 0 {
			c.extra[label] = append(c.extra[label], c.str("env", e.n, e.field), env)
		}
	}
}

// platformEntry is an entry of a kubernetes platform spec list, at field.
type platformEntry struct {
	n     *yaml.Node
	field string
}

// secrets converts the secretAsEnv entries of executor label for a task
// of the dag being converted: each keyToEnv item a step secret, the
// Secret named by secretName or secretNameParameter (a constant, or an
// input of the dag: its param); nil when there are none.
func (c *conv) secrets(label string) *yaml.Node {
	entries := c.secretEnv[label]
	if len(entries) == 0 {
		return nil
	}
	out := c.seq(entries[0].n, entries[0].field)
	for _, e := range entries {
		s := c.fieldsOf(e.n, e.field, "a secretAsEnv entry", []string{"keyToEnv", "secretName", "secretNameParameter", "optional"}, nil)
		name, nameAt := c.secretName(e.n, s, e.field)
		if name == "" {
			continue
		}
		optional := s["optional"]
		if optional != nil && optional.Value != "true" && optional.Value != "false" {
			c.errorf(optional, e.field+".optional", "expected true or false")
			optional = nil
		}
		kf := e.field + ".keyToEnv"
		if s["keyToEnv"] == nil || s["keyToEnv"].Kind != yaml.SequenceNode {
			c.errorf(e.n, kf, "missing: keyToEnv (a list of secretKey and envVar)")
			continue
		}
		for j, kv := range s["keyToEnv"].Content {
			f := kf + "[" + strconv.Itoa(j) + "]"
			m := c.fieldsOf(kv, f, "a keyToEnv item", []string{"secretKey", "envVar"}, nil)
			key, ok1 := c.scalarOf(m["secretKey"], f+".secretKey", "a Secret's key")
			env, ok2 := c.scalarOf(m["envVar"], f+".envVar", "a variable name")
			if !ok1 || !ok2 {
				if m["secretKey"] == nil || m["envVar"] == nil {
					c.errorf(kv, f, "missing: secretKey and envVar")
				}
				continue
			}
			sec := c.mapping(kv, f,
				c.str("env", m["envVar"], f+".envVar"), c.str(env, m["envVar"], f+".envVar"),
				c.str("secret", nameAt, e.field), c.str(name, nameAt, e.field),
				c.str("key", m["secretKey"], f+".secretKey"), c.str(key, m["secretKey"], f+".secretKey"))
			if optional != nil {
				c.add(sec, "optional", optional, e.field+".optional", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: optional.Value, Line: optional.Line, Column: optional.Column})
			}
			out.Content = append(out.Content, sec)
		}
	}
	if len(out.Content) == 0 {
		return nil
	}
	return out
}

// secretName is the Secret's name of a secretAsEnv entry (n, its fields
// s, at field) and the node it comes from: secretNameParameter's constant,
// its input of the dag (a param, or a task's output through a body's
// input) or a task's output; else secretName. "" when it has none
// pipectl can give.
func (c *conv) secretName(n *yaml.Node, s map[string]*yaml.Node, field string) (string, *yaml.Node) {
	p := s["secretNameParameter"]
	if p == nil {
		if name, ok := c.scalarOf(s["secretName"], field+".secretName", "a Secret's name"); ok {
			return name, s["secretName"]
		}
		c.errorf(n, field, "missing: secretName or secretNameParameter")
		return "", nil
	}
	pf := field + ".secretNameParameter"
	ps := c.fieldsOf(p, pf, "a secretNameParameter", []string{"runtimeValue", "componentInputParameter", "taskOutputParameter"}, nil)
	if to := ps["taskOutputParameter"]; to != nil {
		tf := pf + ".taskOutputParameter"
		_, _, hasTask := yamlfile.Lookup(to, "producerTask")
		_, _, hasKey := yamlfile.Lookup(to, "outputParameterKey")
		if !hasTask || !hasKey {
			c.errorf(to, tf, "missing: producerTask and outputParameterKey")
		}
		ref, ok := c.taskOutputParameter(to, tf)
		if !ok {
			return "", nil
		}
		return ref, to
	}
	if rv := ps["runtimeValue"]; rv != nil {
		r := c.fieldsOf(rv, pf+".runtimeValue", "a runtimeValue", []string{"constant"}, nil)
		if name, ok := c.scalarOf(r["constant"], pf+".runtimeValue.constant", "a Secret's name"); ok {
			return name, r["constant"]
		}
		return "", nil
	}
	in, ok := c.scalarOf(ps["componentInputParameter"], pf+".componentInputParameter", "an input name")
	if !ok {
		return "", nil
	}
	ref, err := c.scoped(in, nil)
	if err == nil && !wholeRefRE().MatchString(ref) {
		err = fmt.Errorf("input %q of the ParallelFor body is %s: a Secret's name is a constant, a pipeline input or a task's output", in, ref)
	}
	if err != nil {
		c.errorf(ps["componentInputParameter"], pf+".componentInputParameter", "%v", err)
		return "", nil
	}
	return ref, ps["componentInputParameter"]
}

// platformWhy says why pipectl has no mapping for a kubernetes platform
// spec, by its key.
var platformWhy = map[string]string{
	"secretAsVolume":         secretWhy,
	"configMapAsEnv":         secretWhy,
	"configMapAsVolume":      secretWhy,
	"pvcMount":               volumeWhy,
	"workspace":              volumeWhy,
	"emptyDirMounts":         volumeWhy,
	"genericEphemeralVolume": volumeWhy,
	"nodeAffinity":           ": a pipectl step is placed by its node selector and tolerations only",
	"imagePullSecret":        ": pipectl's pods pull with the namespace's service account",
}

const (
	secretWhy = ": pipectl gives a step's program a Secret's keys as variables only (secretAsEnv: a step's secrets), no Secret's files and no config maps (the same file runs locally, with no cluster to read them from): give the value as a pipeline input"
	volumeWhy = ": pipectl has no volumes; steps hand data to each other as artifacts in the artifact store, locally and on a cluster (an output artifact of one task, an input of the next)"
)

// executorOf is the executor label of KFP component name, or "".
func (c *conv) executorOf(name string) string {
	n, _, ok := yamlfile.Lookup(c.comps, name, "executorLabel")
	if !ok || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
