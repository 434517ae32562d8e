package kfpv2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// topKeys are the keys of a KFP v2 pipeline file's first document.
var topKeys = []string{"components", "deploymentSpec", "pipelineInfo", "root", "schemaVersion", "sdkVersion", "defaultPipelineRoot"}

// Is reports whether data's first YAML document is a KFP v2 pipeline: a
// mapping without apiVersion that has pipelineInfo, root, deploymentSpec
// or schemaVersion.
func Is(data []byte) bool {
	var doc struct {
		APIVersion     any `yaml:"apiVersion"`
		PipelineInfo   any `yaml:"pipelineInfo"`
		Root           any `yaml:"root"`
		DeploymentSpec any `yaml:"deploymentSpec"`
		SchemaVersion  any `yaml:"schemaVersion"`
	}
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil {
		return false
	}
	return doc.APIVersion == nil && (doc.PipelineInfo != nil || doc.Root != nil || doc.DeploymentSpec != nil || doc.SchemaVersion != nil)
}

// File is a parsed KFP v2 pipeline file.
type File struct {
	*yamlfile.File
	// Platform is the second document (platforms: ...), or nil.
	Platform *yaml.Node
}

// Parse parses data as a KFP v2 pipeline file named path: one document,
// or two when the second holds the platform specs.
func Parse(path string, data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(path, err)
		}
		n := &doc
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue
		}
		docs = append(docs, n)
	}
	if len(docs) == 0 || docs[0].Kind != yaml.MappingNode {
		return nil, &yamlfile.Error{File: path, Line: 1, Column: 1, Msg: "expected a KFP pipeline: a mapping with pipelineInfo, root, components and deploymentSpec"}
	}
	f := &File{File: &yamlfile.File{Path: path, Root: docs[0]}}
	if len(docs) > 1 {
		p := docs[1]
		if _, _, ok := yamlfile.Lookup(p, "platforms"); !ok || p.Kind != yaml.MappingNode || len(p.Content) != 2 {
			return nil, &yamlfile.Error{File: path, Line: p.Line, Column: p.Column, Msg: "a second YAML document: expected KFP's platform specs (platforms: ...)"}
		}
		f.Platform = p
	}
	if len(docs) > 2 {
		return nil, &yamlfile.Error{File: path, Line: docs[2].Line, Column: docs[2].Column, Msg: "a third YAML document: a KFP pipeline file holds the pipeline and optionally its platform specs"}
	}
	return f, nil
}

var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

func syntaxError(path string, err error) error {
	msg := err.Error()
	if m := lineRE().FindStringSubmatch(msg); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		return &yamlfile.Error{File: path, Line: line, Column: 1, Msg: m[2]}
	}
	return &yamlfile.Error{File: path, Line: 1, Column: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// Result is a KFP v2 pipeline as a pipectl pipeline.
type Result struct {
	// Root is the pipeline's YAML: every node carries the line and column
	// of the KFP file's node it comes from.
	Root *yaml.Node
	// fields are the KFP field paths of the KFP file's nodes, by position.
	fields map[[2]int]string
}

// Field returns the KFP field path of the node at line and column of the
// KFP file, when the pipeline has a node from there.
func (r *Result) Field(line, col int) (string, bool) {
	f, ok := r.fields[[2]int{line, col}]
	return f, ok
}

// Convert writes the KFP v2 pipeline of f as a pipectl pipeline. Every
// problem it finds is returned, joined, each a *yamlfile.Error.
func Convert(f *File) (*Result, error) {
	c := &conv{f: f.File, fields: map[[2]int]string{}, built: map[string]*yaml.Node{}, active: map[string]bool{}, extra: stepFields{}}
	root := c.pipeline(f)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return &Result{Root: root, fields: c.fields}, nil
}

// conv converts one file.
type conv struct {
	f    *yamlfile.File
	errs []error
	// fields are the KFP field paths of the nodes used, by position.
	fields map[[2]int]string
	// comps and execs are components and deploymentSpec.executors.
	comps, execs *yaml.Node
	// built are the converted components, by name; active those being
	// converted (a component that uses itself is an error).
	built  map[string]*yaml.Node
	active map[string]bool
	// loops are the ParallelFors whose body is being converted, outermost
	// first; loopSteps counts the loop steps made (loop.go).
	loops     []*loopLevel
	loopSteps int
	// atRoot is set while the root DAG's tasks are converted; final is set
	// by task on a task that becomes a finally step.
	atRoot, final bool
	// atRootDefs is set while the root's inputDefinitions are read.
	atRootDefs bool
	// extra are the step fields of the steps running each executor
	// (resources.go, platform.go); secretEnv its secretAsEnv entries,
	// converted per task.
	extra     stepFields
	secretEnv map[string][]platformEntry
	// runtimeRes are the container resources given at run time (a task
	// input), by executor label, converted per task.
	runtimeRes map[string][]runtimeResource
	// podMeta are the executors' podMetadata, fieldPaths their
	// fieldPathAsEnv (platform.go), by executor label.
	podMeta    map[string]podMeta
	fieldPaths map[string]platformEntry
	// dagTasks are the tasks of the dag being converted; names the steps
	// each of its ParallelFor tasks becomes (names.go).
	dagTasks *yaml.Node
	names    map[string][]string
	// omitted are the inputs of the sub-DAG being converted that are
	// optional, without a default, and given by no task: left out.
	omitted map[string]bool
	// taskName is the KFP name of the task whose inputs are being
	// converted ({{$.pipeline_task_name}} in a constant).
	taskName string
	// rootTasks are the root DAG's tasks; imports its importer tasks,
	// each an artifact param (importer.go).
	rootTasks *yaml.Node
	imports   map[string]rootImport
	// subImports are the importer tasks of sub-DAGs, by DAG component
	// and task ("COMP/TASK"), each an artifact param of its sub-DAG (nil
	// for one in error); importedIn the sub-DAG inputs that are artifact
	// params for them, their types by component and input; dagComp is the
	// component whose dag is being converted ("" for the root).
	subImports map[*yaml.Node]map[string]*rootImport
	importedIn map[string]map[string]string
	dagComp    string
	// metaInputs are the inputs of the importer whose metadata is being
	// converted, by name (importer.go).
	metaInputs map[string]metaInput
}

func (c *conv) errorf(n *yaml.Node, field, format string, args ...any) {
	c.errs = append(c.errs, c.f.Errorf(n, field, format, args...))
}

// at records that node n of the KFP file is field.
func (c *conv) at(n *yaml.Node, field string) {
	if n == nil {
		return
	}
	k := [2]int{n.Line, n.Column}
	if _, ok := c.fields[k]; !ok {
		c.fields[k] = field
	}
}

// str and mapping make nodes of the pipeline at the position of the KFP
// file's node at, which is field.
func (c *conv) str(value string, at *yaml.Node, field string) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: at.Line, Column: at.Column}
}

func (c *conv) mapping(at *yaml.Node, field string, kv ...*yaml.Node) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv, Line: at.Line, Column: at.Column}
}

func (c *conv) seq(at *yaml.Node, field string) *yaml.Node {
	c.at(at, field)
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: at.Line, Column: at.Column}
}

// add appends key: value to mapping m, the key at the position of at.
func (c *conv) add(m *yaml.Node, key string, at *yaml.Node, field string, value *yaml.Node) {
	m.Content = append(m.Content, c.str(key, at, field), value)
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// fieldsOf checks that n is a mapping whose keys are among allowed, and
// returns its values by key. A key in unsupported is KFP's but not run
// by pipectl: an error saying so.
func (c *conv) fieldsOf(n *yaml.Node, field, what string, allowed []string, unsupported map[string]string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	c.at(n, field)
	if n.Kind != yaml.MappingNode {
		c.errorf(n, field, "expected %s (a mapping)", what)
		return out
	}
	keys, values := yamlfile.Pairs(n)
	for i, k := range keys {
		kf := join(field, k.Value)
		c.at(k, kf)
		c.at(values[i], kf)
		if why, ok := unsupported[k.Value]; ok {
			c.errorf(k, kf, "KFP %s is not supported yet%s", k.Value, why)
			continue
		}
		if !slices.Contains(allowed, k.Value) {
			c.errorf(k, kf, "unknown field %q of %s (expected one of: %s)", k.Value, what, strings.Join(allowed, ", "))
			continue
		}
		out[k.Value] = values[i]
	}
	return out
}

// scalarOf returns the value of a scalar node, or reports it.
func (c *conv) scalarOf(n *yaml.Node, field, what string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		c.errorf(n, field, "expected %s", what)
		return "", false
	}
	return n.Value, true
}

// place gives n and the nodes below it the position of at.
func place(n, at *yaml.Node) {
	n.Line, n.Column = at.Line, at.Column
	for _, e := range n.Content {
		place(e, at)
	}
}
