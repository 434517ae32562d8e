package plan

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// Step is the plan of one step: everything any backend needs to run it.
// Build makes it from a loaded pipeline; it is never re-derived from
// environment variables, container args or Kubernetes objects.
type Step struct {
	// Pipeline is the pipeline's metadata.name.
	Pipeline string `json:"pipeline"`
	// Name is the step's name.
	Name string `json:"name"`
	// Component is the program and its typed inputs and outputs.
	Component *components.Program `json:"component"`
	// Wiring gives each input its value and the program its step env.
	Wiring *Wiring `json:"wiring"`
	// Deps are the steps that must succeed first, sorted.
	Deps []string `json:"deps,omitempty"`
	// When, when set, runs the step only if it holds.
	When *Condition `json:"when,omitempty"`
	// Retries is how many times a failed attempt is tried again.
	Retries int `json:"retries,omitempty"`
	// Timeout bounds one attempt (0: no bound).
	Timeout pipeline.Duration `json:"timeout,omitzero"`
	// Cache is false when the step must never reuse earlier outputs.
	Cache bool `json:"cache"`
	// Image is the component's container image ("" when it has none: the
	// step then runs only locally).
	Image string `json:"image,omitempty"`
	// Pod shapes the step's pod on Kubernetes (a distributed step's rank
	// pods are shaped by Distributed.Pod instead).
	Pod Pod `json:"pod"`
	// Distributed, when set, makes the step a gang of ranks (a loop step:
	// one gang per iteration).
	Distributed *Distributed `json:"distributed,omitempty"`
	// Loop, when set, runs the step once per item of Wiring.Items.
	Loop *Loop `json:"loop,omitempty"`
	// Finally marks a step that runs once the other steps have ended,
	// whatever their outcome.
	Finally bool `json:"finally,omitempty"`
	// AfterCompleted marks a step that runs once each of Deps ended,
	// whatever its outcome (pipeline.TriggerCompleted); the outputs it
	// reads of them are Wiring.OrDefault.
	AfterCompleted bool `json:"afterCompleted,omitempty"`
}

// Loop is how a loop step's iterations run. Iteration i is the step
// STEP[i] (pipeline.IterationName) with item i of Wiring.Items.
type Loop struct {
	// Parallelism bounds the iterations running at once (0: no bound).
	Parallelism int `json:"parallelism,omitempty"`
}

// ItemsInput is the name the upstream output a loop's items come from
// travels under (--upstream loop-items=VALUE): no input has it, input
// names being identifiers.
const ItemsInput = "loop-items"

// ProductInputPrefix starts the name the upstream output a list of a
// loop's product comes from travels under (--upstream loop-items-NAME=VALUE).
const ProductInputPrefix = ItemsInput + "-"

// ResourceInputPrefix starts the name an upstream value of a resource
// given at run time travels under (--upstream resource-cpu=VALUE): no
// input has it, input names being identifiers.
const ResourceInputPrefix = "resource-"

// Wiring is how one step feeds its component (--step): what each input
// gets and the step's env. Values are Texts made at run time.
type Wiring struct {
	// Version is wire.WiringVersion.
	Version int `json:"v"`
	// Step is the step's name: outputs go to <run>/<step>/<output>.
	Step string `json:"step"`
	// Params give input parameters their values, by input name.
	Params map[string]Text `json:"params,omitempty"`
	// Inputs give input artifacts their producers, by input name: the
	// artifact is <run>/<step>/<output> in the store.
	Inputs map[string]OutputRef `json:"inputs,omitempty"`
	// ParamInputs give input artifacts a pipeline parameter of an artifact
	// type, by input name: the parameter's value is the URI of an artifact
	// in the run's store (an output of an earlier run), given at run time.
	ParamInputs map[string]string `json:"paramInputs,omitempty"`
	// Metadata give the inputs of ParamInputs whose parameter has
	// metadata (pipeline.Param.Metadata, KFP's importer metadata) that
	// metadata, a JSON object as written whose strings may embed
	// {{params.NAME}}, by input name.
	Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
	// Collected give inputs the outputs of every iteration of a loop step,
	// by input name: an input parameter gets a JSON list of the values, an
	// input artifact a directory holding each iteration's output as <i>.
	Collected map[string]OutputRef `json:"collected,omitempty"`
	// OneOf give inputs the output of the first of several steps that
	// succeeded, the others skipped (a nested pipeline's oneOf output;
	// KFP's dsl.OneOf), by input name: an input parameter gets its value
	// as Values.Upstream, an input artifact as Values.Artifacts, both
	// found at run time (ResolveOneOf).
	OneOf map[string][]OutputRef `json:"oneOf,omitempty"`
	// OrDefault give inputs, of a step that runs whatever the outcome of
	// the steps it depends on (Step.AfterCompleted), the output of one of
	// those steps when it succeeded, by input name: an input parameter
	// gets its value as Values.Upstream, an input artifact its URI as
	// Values.Artifacts, both found at run time (ResolveOrDefault); when
	// that step did not succeed the input is not given, and takes its
	// default (an optional one none).
	OrDefault map[string]OutputRef `json:"orDefault,omitempty"`
	// Same give inputs the output of the same iteration of another loop
	// step of the same looped pipeline (pipeline.Step.Body), by input name
	// (or by the key of an Upstream part): iteration i reads the outputs
	// record of STEP[i], an input parameter its value as Values.Upstream,
	// an input artifact its URI as Values.Artifacts (ResolveSame).
	Same map[string]OutputRef `json:"same,omitempty"`
	// SameList, for a loop step of a looped pipeline that loops of its own
	// (pipeline.Step.Nested), names the list of its product that is the
	// looped pipeline's items: iteration k reads, for Same and When, the
	// iteration of that list's item in combination k (sameIteration).
	SameList string `json:"sameList,omitempty"`
	// SameOneOf give inputs the output of the first of several steps of
	// the same looped pipeline that ran the same iteration (a oneOf of
	// them, KFP's dsl.OneOf in a ParallelFor), by input name: as OneOf,
	// each candidate's iteration (ResolveSame); an iteration none of them
	// ran is skipped (SkipReason).
	SameOneOf map[string][]OutputRef `json:"sameOneOf,omitempty"`
	// CollectedOuter, for a step of a looped pipeline given the collected
	// outputs of a loop step of the same pipeline that loops of its own
	// (pipeline.Step.OuterIteration), by input name of Collected: that
	// step's product lists; iteration i collects the iterations of it whose
	// combination's first item is item i (CollectedKeep).
	CollectedOuter map[string][]ProductList `json:"collectedOuter,omitempty"`
	// When, for a loop step, is its condition when it compares the item
	// or another step's output of the same iteration (Condition.PerIteration):
	// each iteration is skipped or run where it runs (SkipReason), and the
	// step has no Step.When.
	When *Condition `json:"when,omitempty"`
	// Items, for a loop step, is the JSON list of its items.
	Items Text `json:"items,omitempty"`
	// Env adds variables to the program's environment.
	Env []EnvText `json:"env,omitempty"`
	// Resources are the pod's resources given at run time, by field
	// (pipeline.ResourceCPU, ...; both GPU fields when either is): each is
	// checked when the step starts (pipeline.CheckRuntimeResource; Check),
	// and on Kubernetes sizes the pod (the template's pod spec patch). An
	// upstream value travels as ResourceInputPrefix+FIELD.
	Resources map[string]Text `json:"resources,omitempty"`
	// Upstream names the step output behind each Upstream part, by the
	// input it feeds. It does not travel: at run time the values come as
	// --upstream INPUT=VALUE.
	Upstream map[string]OutputRef `json:"-"`
}

// OutputRef names an output of a step of the same run.
type OutputRef struct {
	Step   string `json:"step"`
	Output string `json:"output"`
}

// Text is a value made at run time by concatenating its parts.
type Text []Part

// Part is one piece of a Text: literal text, the value of a pipeline
// parameter, the value of the upstream output parameter that feeds an
// input, the iteration's item (or a field of it), a field of the run (a
// finally step's {{run.status}}, {{run.failedSteps}}), or a loop's product.
// Exactly one field is set; none means the empty string.
type Part struct {
	Lit      string   `json:"lit,omitempty"`
	Param    string   `json:"param,omitempty"`
	Upstream string   `json:"upstream,omitempty"`
	Item     *ItemRef `json:"item,omitempty"`
	Run      string   `json:"run,omitempty"`
	// Product, in a loop's Items only, is the JSON list of every
	// combination of its lists' items (pipeline.Product).
	Product []ProductList `json:"product,omitempty"`
}

// ProductList is one list of a loop's product: its name and the JSON list,
// or (an Item part) the field of the current item of an earlier list whose
// value is the list (pipeline.ProductItems).
type ProductList struct {
	Name string `json:"name"`
	List Text   `json:"list"`
}

// ItemRef is {{item}} (Field "") or {{item.FIELD}}: see pipeline.ItemValue.
type ItemRef struct {
	Field string `json:"field,omitempty"`
}

// EnvText is an environment variable whose value is made at run time.
type EnvText struct {
	Name  string `json:"name"`
	Value Text   `json:"value"`
}

// Condition is a step's when: Left Op Right, both sides compared as
// values of Type (see components.Equal and Compare), and each of And.
type Condition struct {
	Left  Operand `json:"left"`
	Op    string  `json:"op"`
	Right Operand `json:"right"`
	// Type is the parameter type the sides are compared as
	// (pipeline.CompareType): a bool True equals true, an int 007 equals 7;
	// string compares trimmed text.
	Type string `json:"type"`
	// Source is the condition as written, for messages.
	Source string `json:"source"`
	// And are the further comparisons of a when written as A && B && ...:
	// the condition holds when it and each of them hold. Their Source is
	// left empty.
	And []Condition `json:"and,omitempty"`
}

// Operand is one side of a Condition: a literal, a pipeline parameter,
// an output parameter of an upstream step (Same: of the same iteration of
// another step of the loop step's looped pipeline), or a loop step's item.
// Exactly one of Lit, Param, Output and Item is set.
type Operand struct {
	Lit    string     `json:"lit,omitempty"`
	Param  string     `json:"param,omitempty"`
	Output *OutputRef `json:"output,omitempty"`
	Same   bool       `json:"same,omitempty"`
	Item   *ItemRef   `json:"item,omitempty"`
}

// Condition operators. The ordered ones compare int or float values: an
// int as a 64-bit integer (as KFP's int() does), a float as a float64.
const (
	OpEqual        = "=="
	OpNotEqual     = "!="
	OpLess         = "<"
	OpLessEqual    = "<="
	OpGreater      = ">"
	OpGreaterEqual = ">="
)

// Pod is how a pod is sized and placed on Kubernetes. Resources are
// requests with equal limits; Tolerations include the NoSchedule
// toleration of the GPU resource when GPUs are requested.
type Pod struct {
	Resources         corev1.ResourceRequirements `json:"resources"`
	NodeSelector      map[string]string           `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration         `json:"tolerations,omitempty"`
	Affinity          *corev1.Affinity            `json:"affinity,omitempty"`
	PriorityClassName string                      `json:"priorityClassName,omitempty"`
	// Secrets are the program's variables from Secrets (a key each).
	Secrets []pipeline.Secret `json:"secrets,omitempty"`
	// Labels and Annotations are the pod's own (the step's podMetadata).
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SecretEnv is the container env of the pod's Secrets: each a
// secretKeyRef, so that no value is ever written into a workflow; a
// Secret named by a param or a step's output is named name(s).
func (p *Pod) SecretEnv(name func(s pipeline.Secret) string) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, s := range p.Secrets {
		secret := s.Secret
		if s.Ref().IsRef() {
			secret = name(s)
		}
		ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: s.Key}
		if s.Optional {
			ref.Optional = &s.Optional
		}
		env = append(env, corev1.EnvVar{Name: s.Env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}})
	}
	return env
}

// SecretParams are the params that name the step's Secrets, sorted.
func (s *Step) SecretParams() []string {
	var out []string
	for _, sec := range s.Secrets() {
		if prm := sec.Param(); prm != "" && !slices.Contains(out, prm) {
			out = append(out, prm)
		}
	}
	slices.Sort(out)
	return out
}

// Secrets are the step's variables from Secrets: its pod's, or its rank
// pods'.
func (s *Step) Secrets() []pipeline.Secret {
	if s.Distributed != nil {
		return s.Distributed.Pod.Secrets
	}
	return s.Pod.Secrets
}

// Distributed is the rank topology and placement of a distributed step:
// Nodes × ProcsPerNode rank processes.
type Distributed struct {
	// Nodes is the number of nodes (rank pods on Kubernetes).
	Nodes int `json:"nodes"`
	// ProcsPerNode is the number of rank processes per node: as written,
	// else the GPUs per rank pod, else 1.
	ProcsPerNode int `json:"procsPerNode"`
	// LocalProcsPerNode is the number of rank processes per node of a local
	// run: as written, else 1 (resources are for Kubernetes). It does not
	// travel.
	LocalProcsPerNode int `json:"-"`
	// Framework chooses the rank environment (Kubeflow Trainer v2's) and
	// which processes run: torch (""), jax, xgboost or mpi.
	Framework rankenv.Framework `json:"framework,omitempty"`
	// MaxRestarts is how often the whole gang is restarted after a rank fails.
	MaxRestarts int `json:"maxRestarts,omitempty"`
	// StartupTimeout bounds the time until every rank runs (Kubernetes; 0
	// for the launcher's default).
	StartupTimeout pipeline.Duration `json:"startupTimeout,omitzero"`
	// StallTimeout is how long the gang may go without progress from any
	// rank before it is stopped and restarted (0: no stall detection).
	StallTimeout pipeline.Duration `json:"stallTimeout,omitzero"`
	// CheckpointKeep is how many checkpoints stay in the store and
	// CheckpointEvery how often a running gang's directory is stored (0:
	// the defaults of package checkpoint).
	CheckpointKeep  int               `json:"checkpointKeep,omitempty"`
	CheckpointEvery pipeline.Duration `json:"checkpointEvery,omitzero"`
	// Port is MASTER_PORT on Kubernetes (0 for DefaultPort); locally a free
	// port is used.
	Port int `json:"port,omitempty"`
	// ShmSize is the size limit of each rank pod's memory-backed /dev/shm:
	// as written, else half the rank's memory limit; "" means unbounded.
	ShmSize string `json:"shmSize,omitempty"`
	// Pod shapes each rank pod.
	Pod
	// Gang selects gang scheduling on Kubernetes.
	Gang *Gang `json:"gang,omitempty"`
}

// Gang selects how all ranks are admitted together on Kubernetes.
type Gang struct {
	// KueueQueue is the Kueue LocalQueue that admits the JobSet.
	KueueQueue string `json:"kueueQueue,omitempty"`
	// PodGroupScheduler is coscheduling or volcano; PodGroupTimeout its
	// schedule timeout.
	PodGroupScheduler string            `json:"podGroupScheduler,omitempty"`
	PodGroupTimeout   pipeline.Duration `json:"podGroupTimeout,omitzero"`
}

// DefaultGPUResource is the extended resource GPUs are requested as.
const DefaultGPUResource = "nvidia.com/gpu"
