package pipeline

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/yamlfile"
)

// Pipeline is a DAG of steps, each running a component.
type Pipeline struct {
	APIVersion string              `yaml:"apiVersion"`
	Kind       string              `yaml:"kind"`
	Metadata   components.Metadata `yaml:"metadata"`
	// Params are the run's parameters, by name.
	Params map[string]Param `yaml:"params,omitempty"`
	// Steps run in dependency order. After loading they are followed by
	// the finally steps (Step.Finally set).
	Steps []Step `yaml:"steps"`
	// Finally are the steps that run once the other steps have ended,
	// whatever their outcome; the loader moves them to the end of Steps.
	Finally []Step `yaml:"finally,omitempty"`
	// Outputs are what the pipeline gives the step of another pipeline
	// that uses it as its component: OUTPUT: "{{steps.STEP.outputs.NAME}}",
	// or OUTPUT: {oneOf: [...]} (see OutputDecl).
	Outputs map[string]OutputDecl `yaml:"outputs,omitempty"`
	// Runtimes are Kubeflow Trainer runtime files (ClusterTrainingRuntime,
	// TrainingRuntime) or folders of them, relative to the pipeline file,
	// whose runtimes steps may name (distributed.runtime).
	Runtimes []string `yaml:"runtimes,omitempty"`
	// Distributed holds defaults of the pipeline's distributed steps (see
	// DistributedDefaults).
	Distributed *DistributedDefaults `yaml:"distributed,omitempty"`

	// Source is the file the pipeline came from; set by the loader.
	Source string `yaml:"-"`
	// ParamOrder lists the params in file order; set by the loader.
	ParamOrder []string `yaml:"-"`
	// OutputOrder lists the outputs in file order; set by the loader.
	OutputOrder []string `yaml:"-"`
	// Warnings are what the loader read and does not use (fields of a
	// Trainer runtime or TrainJob that do not apply), each at its line.
	Warnings []string `yaml:"-"`
	// outputs are the declared outputs as step outputs of the expanded
	// Steps; set by the loader. oneOf are the candidates of the outputs
	// that are the first of several to run (outputs holds the first).
	outputs map[string]Binding
	oneOf   map[string][]Binding
	// byName indexes Steps by name; set by the loader.
	byName map[string]int
}

// Param is one typed pipeline parameter.
type Param struct {
	// Type is string, int, float, bool or json.
	Type string `yaml:"type"`
	// Default is the value used when the run gives none; without it the
	// parameter is required.
	Default yaml.Node `yaml:"default,omitempty"`
	// Description is free text.
	Description string `yaml:"description,omitempty"`
	// Metadata, for an artifact param of the pipeline run (KFP's importer
	// metadata), is the artifact's metadata: a mapping that every step
	// reading the param gets in the executor input ({{executor.input}},
	// inputs.artifacts[NAME].artifacts[0].metadata) as JSON, as written;
	// a string in it (a key or a value) may embed "{{params.NAME}}" of
	// a parameter that is a value, replaced by that value's text, and
	// "{{steps.STEP.outputs.OUTPUT}}" of an output parameter, replaced by
	// its value when a step reading the param starts (that step waits for
	// STEP).
	Metadata yaml.Node `yaml:"metadata,omitempty"`

	// kfp is the input of a KFP v1 graph component the parameter is: what
	// may feed it follows KFP's type rules (components.Compatible).
	kfp *components.IO
}

// MetadataJSON is the JSON text of an artifact param's metadata as
// written ("" when it has none); its strings still hold {{params.NAME}}.
func (prm Param) MetadataJSON() (string, error) {
	if prm.Metadata.Kind == 0 {
		return "", nil
	}
	return components.NodeValue(components.TypeJSON, &prm.Metadata)
}

// Step is one node of the DAG.
type Step struct {
	// Name is a DNS-1123 label, unique in the pipeline.
	Name string `yaml:"name"`
	// Component is a path to a component file (relative to the pipeline
	// file) or an inline component.
	Component yaml.Node `yaml:"component"`
	// Inputs give the component's inputs their values: a literal, a
	// reference "{{params.NAME}}" or "{{steps.STEP.outputs.OUTPUT}}"; a
	// string literal may embed "{{params.NAME}}".
	Inputs map[string]yaml.Node `yaml:"inputs,omitempty"`
	// After lists steps that must finish first, beyond those whose outputs
	// the step uses.
	After []string `yaml:"after,omitempty"`
	// When runs the step only if the condition holds, e.g.
	// "{{params.evaluate}} == true"; otherwise the step is skipped.
	When string `yaml:"when,omitempty"`
	// Retries is how many times a failed step is tried again.
	Retries int `yaml:"retries,omitempty"`
	// Timeout bounds one attempt, e.g. 30m.
	Timeout Duration `yaml:"timeout,omitempty"`
	// Cache: false turns off output reuse for this step.
	Cache *bool `yaml:"cache,omitempty"`
	// Env adds environment variables to the step's program.
	Env []components.EnvVar `yaml:"env,omitempty"`
	// Secrets give the step's program environment variables whose values
	// pipectl never holds: on Kubernetes each is a key of a Secret
	// (secretKeyRef); locally the variable of that name in the environment
	// pipectl runs in. A secret reaches only the steps that name it.
	Secrets []Secret `yaml:"secrets,omitempty"`
	// Image, when set, replaces the component's image for this step: the
	// image its pods run on a cluster (a component may leave it empty for
	// its users to fill in, as KFP's catalogue does).
	Image string `yaml:"image,omitempty"`
	// Resources, NodeSelector and Tolerations shape the step's pods on Kubernetes.
	Resources    *Resources        `yaml:"resources,omitempty"`
	NodeSelector map[string]string `yaml:"nodeSelector,omitempty"`
	Tolerations  []Toleration      `yaml:"tolerations,omitempty"`
	// PodMetadata gives the step's pod labels and annotations on
	// Kubernetes (a local run has no pod).
	PodMetadata *PodMetadata `yaml:"podMetadata,omitempty"`
	// Distributed makes the step a gang of rank processes.
	Distributed *Distributed `yaml:"distributed,omitempty"`
	// Loop runs the step once per item of a list.
	Loop *Loop `yaml:"loop,omitempty"`
	// Trigger is when the step runs: TriggerSucceeded (the default, also
	// written as "") once every step it depends on succeeded, or
	// TriggerCompleted once each of them ended, whatever its outcome
	// (KFP's ignore_upstream_failure()); an input given an output of a
	// step that did not succeed then takes its default.
	Trigger string `yaml:"trigger,omitempty"`

	// Resolved is the step's component; set by the loader.
	Resolved *components.Component `yaml:"-"`
	// oneOf are the candidates of the inputs given a nested pipeline's
	// oneOf output, by input; set when the loader expands nested
	// pipelines (the input's value names the first candidate).
	oneOf map[string][]Binding
	// metaDeps are the steps whose outputs the metadata of the artifact
	// params the step reads embeds; set by the loader (linkMetadata).
	metaDeps []string
	// Finally is set by the loader on the steps of the pipeline's finally list.
	Finally bool `yaml:"-"`
	// Body is set by the loader on the steps of a pipeline that a loop
	// step uses as its component: the name of that loop step. Each such
	// step loops over the loop step's items, and its references to the
	// outputs of the other steps of the same Body read the same iteration
	// (iteration i of STEP reads OTHER[i]'s outputs).
	Body string `yaml:"-"`
	// Nested is set by the loader on a loop step of a looped pipeline
	// (Body is set too): its loop is the product of the looped pipeline's
	// items (list NestOuter) and its own (NestInner), and its references to
	// the outputs of the other steps of Body read their iteration of the
	// same outer item (NestOuter's index in the combination).
	Nested bool `yaml:"-"`
}

// The names of the lists of a nested loop step's product (Step.Nested):
// {{item.outer}} is the looped pipeline's item, {{item.inner}} the step's.
const (
	NestOuter = "outer"
	NestInner = "inner"
)

// Values of Step.Trigger.
const (
	TriggerSucceeded = "succeeded"
	TriggerCompleted = "completed"
)

// AfterCompleted reports whether the step runs once the steps it depends
// on ended, whatever their outcome (trigger: completed).
func (s *Step) AfterCompleted() bool { return s.Trigger == TriggerCompleted }

// SameIteration reports whether step s reads the outputs of step up
// iteration by iteration: both are steps of the same looped pipeline.
func (s *Step) SameIteration(up *Step) bool {
	return s.Body != "" && up != nil && up.Body == s.Body && (!up.Nested || s.Nested)
}

// OuterIteration reports whether step s reads the outputs of step up, a
// loop step of the same looped pipeline that loops of its own (Nested),
// collected per iteration of that pipeline: s's iteration i gets up's
// iterations whose outer item is item i.
func (s *Step) OuterIteration(up *Step) bool {
	return s.Body != "" && up != nil && up.Body == s.Body && up.Nested && !s.Nested
}

// Secret is one environment variable of a step taken from a Secret.
type Secret struct {
	// Env is the variable's name.
	Env string `yaml:"env" json:"env"`
	// Secret and Key name the Kubernetes Secret and its key. Secret may
	// be a whole "{{params.NAME}}", a string param (the Secret the run
	// names), or "{{steps.STEP.outputs.NAME}}", a string output parameter
	// (the step then waits for STEP).
	Secret string `yaml:"secret" json:"secret"`
	Key    string `yaml:"key" json:"key"`
	// Optional: a Secret or key that is not there (locally, a variable
	// not set) leaves the variable unset instead of failing the step.
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
}

// Param is the string param the Secret's name is, "" when the file
// writes the name.
func (s Secret) Param() string { return s.Ref().Param }

// Ref is what names the Secret: a whole reference to a param or a step's
// output, or the name as written (Literal).
func (s Secret) Ref() Binding {
	if b, _, err := parseBinding(s.Secret); err == nil {
		return b
	}
	return Binding{Literal: s.Secret}
}

// Loop runs a step once per item: iteration i is the step STEP[i], whose
// inputs and env may use {{item}} and {{item.FIELD}}.
type Loop struct {
	// Items is the list: a YAML list, or a whole reference to a json
	// parameter or a json output parameter of an upstream step holding a
	// JSON list, "{{params.NAME}}" or "{{steps.STEP.outputs.OUTPUT}}".
	Items yaml.Node `yaml:"items,omitempty"`
	// Product, instead of Items, loops over every combination of several
	// lists (a grid): a mapping of names to lists, each a YAML list, a
	// whole "{{params.NAME}}" of a json param or "{{steps.STEP.outputs.OUTPUT}}"
	// of a json output, or a whole "{{item.NAME}}" or "{{item.NAME.FIELD}}":
	// the current item of an earlier list NAME, or its field, a list
	// (nested loops); the first list is the outermost, and each item is an
	// object of the names ({"lr": 0.1, "seed": 1}: {{item.lr}}, {{item.seed}}).
	Product yaml.Node `yaml:"product,omitempty"`
	// Parallelism bounds the iterations running at once (0: no bound but
	// the run's).
	Parallelism int `yaml:"parallelism,omitempty"`
}

// ProductList is one list of a loop's product: its name and where its
// items come from: a Literal JSON list, a Param, a step's Output, or
// (Item) the current item of an earlier list of the product, Field its
// name and the field's path: "a" or "a.xs".
type ProductList struct {
	Name string
	Binding
}

// ProductError is a problem with list List of a loop's product.
type ProductError struct {
	List string
	Err  error
}

func (e *ProductError) Error() string { return "list " + e.List + ": " + e.Err.Error() }

func (e *ProductError) Unwrap() error { return e.Err }

// Outer is the name of the earlier list whose current item (or its field)
// the list is, "" for a list of its own.
func (l ProductList) Outer() string {
	if !l.Item {
		return ""
	}
	name, _, _ := strings.Cut(l.Field, ".")
	return name
}

// ProductLists returns the lists of a loop step's product, in order, or
// nil when it loops over items. A list of an earlier list's item names
// one before it (else a *ProductError).
func (s *Step) ProductLists() ([]ProductList, error) {
	if s.Loop == nil {
		return nil, fmt.Errorf("step %s has no loop", s.Name)
	}
	n := yamlfile.Deref(&s.Loop.Product)
	if n.Kind == 0 {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil, fmt.Errorf("expected a mapping of names to lists ({lr: [0.1, 0.01], seed: \"{{params.seeds}}\"})")
	}
	var out []ProductList
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, list := n.Content[i].Value, yamlfile.Deref(n.Content[i+1])
		if want := components.ValidIdent(name); want != "" {
			return nil, fmt.Errorf("invalid name %q: expected %s", name, want)
		}
		switch {
		case list.Kind == yaml.SequenceNode:
			text, err := components.NodeValue(components.TypeJSON, list)
			if err != nil {
				return nil, &ProductError{name, err}
			}
			out = append(out, ProductList{Name: name, Binding: Binding{Literal: text}})
			seen[name] = true
			continue
		case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!str":
			if b, _, err := parseBinding(list.Value); err == nil && b.IsRef() {
				out = append(out, ProductList{Name: name, Binding: b})
				seen[name] = true
				continue
			}
			if it, ok := wholeItem(list.Value); ok && it.field != "" {
				l := ProductList{Name: name, Binding: Binding{Item: true, Field: it.field}}
				if outer := l.Outer(); !seen[outer] {
					var names []string
					for _, o := range out {
						names = append(names, o.Name)
					}
					earlier := "the first list has none"
					if len(names) > 0 {
						earlier = "want one of " + strings.Join(names, ", ")
					}
					return nil, &ProductError{name, fmt.Errorf("%s names %q, which is no list before it (%s): a list may loop over the current item of an earlier list of the product, or a field of it", list.Value, outer, earlier)}
				}
				out = append(out, l)
				seen[name] = true
				continue
			}
		}
		return nil, &ProductError{name, fmt.Errorf("cannot loop over %s: expected a list, a whole \"{{params.NAME}}\" or \"{{steps.STEP.outputs.OUTPUT}}\" holding one, or a whole \"{{item.NAME.FIELD}}\" of an earlier list's item", describeNode(list))}
	}
	return out, nil
}

// MaxParallelism bounds loop.parallelism.
const MaxParallelism = MaxItems

// Resources are requests (and equal limits) for a pod or each rank.
// CPU, Memory, GPU and GPUResource may each instead be a whole reference,
// "{{params.NAME}}" or "{{steps.STEP.outputs.NAME}}", that gives the value
// at run time (the step then waits for STEP); not on a distributed step.
type Resources struct {
	CPU    string `yaml:"cpu,omitempty"`
	Memory string `yaml:"memory,omitempty"`
	// GPU is the number of GPUs (nvidia.com/gpu unless GPUResource says
	// otherwise): decimal digits, or a reference.
	GPU string `yaml:"gpu,omitempty"`
	// GPUResource is the extended resource name for GPUs.
	GPUResource string `yaml:"gpuResource,omitempty"`
	// Extra are other extended resources, by name.
	Extra map[string]string `yaml:"extra,omitempty"`
}

// Resource fields that may be given at run time, by their names in a
// pipeline file.
const (
	ResourceCPU         = "cpu"
	ResourceMemory      = "memory"
	ResourceGPU         = "gpu"
	ResourceGPUResource = "gpuResource"
)

// RuntimeFields are the fields that may be given at run time, in order.
var RuntimeFields = []string{ResourceCPU, ResourceMemory, ResourceGPU, ResourceGPUResource}

// Field returns the value of runtime field f as written.
func (r *Resources) Field(f string) string {
	switch f {
	case ResourceCPU:
		return r.CPU
	case ResourceMemory:
		return r.Memory
	case ResourceGPU:
		return r.GPU
	case ResourceGPUResource:
		return r.GPUResource
	}
	return ""
}

// setField sets runtime field f.
func (r *Resources) setField(f, v string) {
	switch f {
	case ResourceCPU:
		r.CPU = v
	case ResourceMemory:
		r.Memory = v
	case ResourceGPU:
		r.GPU = v
	case ResourceGPUResource:
		r.GPUResource = v
	}
}

// Refs are the fields given at run time, by field: each a whole reference
// to a param or a step's output. Nil when there are none.
func (r *Resources) Refs() map[string]Binding {
	if r == nil {
		return nil
	}
	var out map[string]Binding
	for _, f := range RuntimeFields {
		if b, _, err := parseBinding(r.Field(f)); err == nil && b.IsRef() {
			if out == nil {
				out = map[string]Binding{}
			}
			out[f] = b
		}
	}
	return out
}

// GPUs is the number of GPUs written (0 when none, or given at run time).
func (r *Resources) GPUs() int {
	if r == nil {
		return 0
	}
	n, err := strconv.Atoi(r.GPU)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// PodMetadata are labels and annotations of a step's pod.
type PodMetadata struct {
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// Toleration is a Kubernetes toleration.
type Toleration struct {
	Key      string `yaml:"key,omitempty"`
	Operator string `yaml:"operator,omitempty"`
	Value    string `yaml:"value,omitempty"`
	Effect   string `yaml:"effect,omitempty"`
}

// Limits of the numbers a pipeline file may hold, checked by the loader:
// each fits Kubernetes' int32 fields (Job completions and parallelism,
// JobSet restarts, Argo retry limits) and a local run's process table.
const (
	// MaxNodes bounds distributed.nodes: the pods of one gang.
	MaxNodes = 10_000
	// MaxProcsPerNode bounds distributed.procsPerNode.
	MaxProcsPerNode = 1_024
	// MaxWorldSize bounds nodes × procsPerNode, the gang's WORLD_SIZE.
	MaxWorldSize = 1_000_000
	// MaxRetries bounds a step's retries and distributed.maxRestarts.
	MaxRetries = 1_000
	// MaxGPUs bounds resources.gpu, the GPUs of one pod.
	MaxGPUs = 1_024
)

// Distributed describes a gang of ranks: Nodes × ProcsPerNode processes.
type Distributed struct {
	// Nodes is the number of nodes (pods on Kubernetes).
	Nodes int `yaml:"nodes"`
	// ProcsPerNode is the number of rank processes per node; by default the
	// GPUs per rank pod on Kubernetes, else 1 (locally always 1).
	ProcsPerNode int `yaml:"procsPerNode,omitempty"`
	// Framework is how the step trains, with the rank environment Kubeflow
	// Trainer v2 sets for it (package rankenv): torch (the default: the
	// torchrun contract), jax (one process per node, JAX_*), xgboost (one
	// worker per rank, DMLC_*), mpi (the command, mpirun …, runs once on
	// node 0 with a hostfile of every node's slots, OMPI_MCA_*).
	Framework string `yaml:"framework,omitempty"`
	// Runtime names a Kubeflow Trainer runtime (ClusterTrainingRuntime or
	// TrainingRuntime) that gives the step what it does not set itself:
	// framework, nodes, procsPerNode, image, env, resources, nodeSelector,
	// tolerations, affinity, priorityClass, the pod group (see
	// LoadOptions and Pipeline.Runtimes).
	Runtime string `yaml:"runtime,omitempty"`
	// MaxRestarts is how often the whole gang is restarted after a rank fails.
	MaxRestarts int `yaml:"maxRestarts,omitempty"`
	// StartupTimeout bounds the time until every rank runs (Kubernetes).
	StartupTimeout Duration `yaml:"startupTimeout,omitempty"`
	// StallTimeout, when set, is how long the gang may go without progress
	// (a line any rank prints, a metric any rank reports) before it is
	// stalled: stopped and restarted (counting against MaxRestarts). Off
	// when not set.
	StallTimeout Duration `yaml:"stallTimeout,omitempty"`
	// Checkpoint shapes how the ranks' checkpoint directory
	// (PIPECTL_CHECKPOINT_DIR) is kept; every distributed step has one.
	Checkpoint *Checkpoint `yaml:"checkpoint,omitempty"`
	// Port is the rendezvous port (MASTER_PORT) on Kubernetes; a free port locally.
	Port int `yaml:"port,omitempty"`
	// ShmSize is the size of each rank pod's memory-backed /dev/shm (a
	// quantity such as 8Gi); by default half the rank's memory limit, or
	// unbounded without one (Kubernetes; locally /dev/shm is the machine's).
	ShmSize string `yaml:"shmSize,omitempty"`
	// Resources, NodeSelector, Tolerations, Affinity and PriorityClass shape each rank's pod.
	Resources     *Resources        `yaml:"resources,omitempty"`
	NodeSelector  map[string]string `yaml:"nodeSelector,omitempty"`
	Tolerations   []Toleration      `yaml:"tolerations,omitempty"`
	Affinity      yaml.Node         `yaml:"affinity,omitempty"`
	PriorityClass string            `yaml:"priorityClass,omitempty"`
	// Gang selects gang scheduling on Kubernetes.
	Gang *Gang `yaml:"gang,omitempty"`
}

// Checkpoint is how a distributed step's checkpoint directory is kept in
// the artifact store (package checkpoint).
type Checkpoint struct {
	// Keep is how many checkpoints stay in the store (1 when not set).
	Keep int `yaml:"keep,omitempty"`
	// Every is how often the directory is stored while the gang runs (1m
	// when not set); it is also stored whenever a gang attempt ends.
	Every Duration `yaml:"every,omitempty"`
}

// Gang selects how all ranks are admitted together on Kubernetes.
type Gang struct {
	Kueue    *KueueGang    `yaml:"kueue,omitempty"`
	PodGroup *PodGroupGang `yaml:"podGroup,omitempty"`
}

// KueueGang admits the gang through a Kueue LocalQueue.
type KueueGang struct {
	Queue string `yaml:"queue"`
}

// PodGroupGang schedules the gang as a PodGroup.
type PodGroupGang struct {
	// Scheduler is coscheduling or volcano.
	Scheduler string `yaml:"scheduler"`
	// Timeout is the PodGroup's schedule timeout.
	Timeout Duration `yaml:"timeout,omitempty"`
}

// Procs returns the number of processes per node (at least 1).
func (d *Distributed) Procs() int {
	if d.ProcsPerNode < 1 {
		return 1
	}
	return d.ProcsPerNode
}

// Duration is a time.Duration written as "90s", "10m" or "1h30m".
type Duration struct{ time.Duration }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a duration such as 90s, 10m or 1h30m, got %q", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON implements json.Marshaler: Go's text form ("1h30m0s"), the
// form a duration travels in a step's plan.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected a duration such as \"90s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("expected a duration such as \"90s\", got %q", s)
	}
	d.Duration = v
	return nil
}

// ItemsBinding returns where a loop step's items come from: a Literal
// (the YAML list as JSON text, values as written), a Param or a Step output.
func (s *Step) ItemsBinding() (Binding, error) {
	if s.Loop == nil {
		return Binding{}, fmt.Errorf("step %s has no loop", s.Name)
	}
	n := yamlfile.Deref(&s.Loop.Items)
	switch {
	case n.Kind == 0:
		return Binding{}, fmt.Errorf("missing: loop.items (a list, or \"{{params.NAME}}\" or \"{{steps.STEP.outputs.OUTPUT}}\" holding a JSON list)")
	case n.Kind == yaml.SequenceNode:
		text, err := components.NodeValue(components.TypeJSON, n)
		if err != nil {
			return Binding{}, err
		}
		return Binding{Literal: text}, nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		b, _, err := parseBinding(n.Value)
		if err != nil {
			return Binding{}, err
		}
		if b.IsRef() {
			return b, nil
		}
	}
	return Binding{}, fmt.Errorf("cannot loop over %s: expected a list, or a whole reference \"{{params.NAME}}\" or \"{{steps.STEP.outputs.OUTPUT}}\" holding a JSON list", describeNode(n))
}

// describeNode names a YAML value for messages.
func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		return "a mapping"
	}
	return quoteShort(n.Value)
}

// CacheEnabled reports whether the step may reuse earlier outputs.
func (s *Step) CacheEnabled() bool { return s.Cache == nil || *s.Cache }

// CheckArtifactURI checks that n, an artifact param's default, is a
// string that can name an artifact of an artifact store (see
// uris.CheckURI), or an object the run imports into its store before
// any step runs (gs://BUCKET/KEY, s3://BUCKET/KEY: see imports.Import):
// the store is known when the run starts, and the step reading the
// artifact checks it is there.
func CheckArtifactURI(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return fmt.Errorf("expected the URI of an artifact in the artifact store (a string such as s3://BUCKET/PREFIX/RUN/STEP/OUTPUT) or of an object to import (gs://BUCKET/KEY)")
	}
	return uris.CheckArtifactOrImportURI(n.Value)
}
