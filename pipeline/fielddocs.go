package pipeline

import (
	"fmt"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// Values the validator accepts for fields with a fixed set, listed once
// for it and for `pipectl explain`.
var (
	// TolerationOperators are a toleration's operators ("" is Equal).
	TolerationOperators = []string{"Equal", "Exists"}
	// TolerationEffects are a toleration's effects ("" is every effect).
	TolerationEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	// PodGroupSchedulers are the schedulers of distributed.gang.podGroup.
	PodGroupSchedulers = []string{"coscheduling", "volcano"}
	// Triggers are the values of a step's trigger.
	Triggers = []string{TriggerSucceeded, TriggerCompleted}
)

func frameworkNames() []string {
	out := make([]string, len(rankenv.Frameworks))
	for i, f := range rankenv.Frameworks {
		out[i] = string(f)
	}
	return out
}

func ioTypes() []string {
	return append(append([]string{}, components.ParamTypes...), components.ArtifactTypes...)
}

// fieldDocs documents every field of the schema (see Schema), keyed by its
// path; the fields below docAliases' keys share their entries. A test
// checks that every field the loader accepts has one, and every entry is
// a field the loader accepts.
var fieldDocs = map[string]FieldDoc{
	"pipeline":                                           {Doc: "A pipeline file: typed params and a DAG of steps, each running a component. `pipectl run FILE` runs it on this machine, `pipectl compile FILE` makes it an Argo Workflow."},
	"pipeline.apiVersion":                                {Required: true, Values: []string{components.APIVersion}, Doc: "The version of the file format."},
	"pipeline.kind":                                      {Required: true, Values: []string{"Pipeline"}, Doc: "What the file holds."},
	"pipeline.metadata":                                  {Required: true, Doc: "The pipeline's name and description."},
	"pipeline.metadata.name":                             {Required: true, Doc: "A DNS-1123 label (lower-case letters, digits and '-'): it names the runs (NAME-DATE-TIME-SUFFIX) and, on Kubernetes, their objects."},
	"pipeline.metadata.description":                      {Doc: "Free text."},
	"pipeline.metadata.labels":                           {Doc: "Labels copied to the run and, on Kubernetes, to its objects."},
	"pipeline.params":                                    {Doc: "The run's parameters, by name: each has a type and, unless the run must give it (-p NAME=VALUE), a default. Steps read them as \"{{params.NAME}}\"."},
	"pipeline.params.type":                               {Required: true, Values: ioTypes(), Doc: "A parameter type, or an artifact type for an artifact param: the URI of an artifact in the store (an earlier run's output), or of an object to import (gs://, s3://, oci://)."},
	"pipeline.params.default":                            {Type: "value of the param's type", Doc: "The value used when the run gives none; without it the param is required. A json param's default may be written as YAML (a list, a mapping) and becomes compact JSON, key order and numbers as written."},
	"pipeline.params.description":                        {Doc: "Free text, shown by validate and the UI."},
	"pipeline.params.metadata":                           {Type: "object", Doc: "For an artifact param: the artifact's metadata (KFP's importer metadata), given as JSON to every step reading the param in its executor input; strings in it may embed {{params.NAME}} and {{steps.STEP.outputs.NAME}}."},
	"pipeline.runtimes":                                  {Doc: "Kubeflow Trainer runtime files (ClusterTrainingRuntime, TrainingRuntime) or folders of them, relative to this file, whose runtimes steps may name (distributed.runtime); they win over --runtimes and the cluster's."},
	"pipeline.distributed":                               {Doc: "Defaults for this file's distributed steps (not those of a nested pipeline): a step's own value wins."},
	"pipeline.distributed.stallTimeout":                  {Default: "off", Doc: fmt.Sprintf("The stallTimeout of every distributed step of this file that sets none (at least %s).", MinStallTimeout)},
	"pipeline.distributed.startupTimeout":                {Default: "none", Doc: "The startupTimeout of every distributed step of this file that sets none."},
	"pipeline.steps":                                     {Required: true, Doc: "The steps, run in dependency order: a step waits for the steps whose outputs it reads, those it names in after, and those its when reads; independent steps run in parallel."},
	"pipeline.steps.name":                                {Required: true, Doc: "A DNS-1123 label, unique in the pipeline. A loop's iterations are NAME[0], NAME[1], …; a nested pipeline's steps OUTER.INNER."},
	"pipeline.steps.component":                           {Required: true, Type: "string or object", Doc: "What the step runs: a path to a component file (pipectl's, or a KFP v1 component.yaml) or a pipeline file, relative to this file; or an inline component (its fields below, apiVersion and kind included) or inline pipeline. A component's program runs in the folder of its file (an inline one's: this file's folder)."},
	"pipeline.steps.inputs":                              {Type: "map[string]value", Doc: "Values of the component's inputs, by name: a literal (checked against the input's type and passed as written), \"{{params.NAME}}\", \"{{steps.STEP.outputs.OUTPUT}}\" (which makes the step wait for STEP), \"{{item}}\" or \"{{item.FIELD}}\" in a loop, \"{{run.id}}\"; a string may embed them. Quote a value that starts with {{: YAML reads {{…}} unquoted as a mapping."},
	"pipeline.steps.after":                               {Doc: "Steps that must finish first, beyond those whose outputs the step uses."},
	"pipeline.steps.when":                                {Doc: "A condition: the step runs only when it holds, else it is skipped (and the steps needing it too). \"{{params.flag}}\", \"{{params.n}} > 3\", \"{{steps.s.outputs.ok}} == true && {{params.x}} != a\": ==, !=, <, <=, >, >= compare values of the reference's type."},
	"pipeline.steps.retries":                             {Default: "0", Doc: fmt.Sprintf("How many times a failed attempt is tried again (0 to %d).", MaxRetries)},
	"pipeline.steps.timeout":                             {Default: "none", Doc: "Bounds one attempt, e.g. 30m or 1h30m: an attempt still running then is stopped (SIGTERM, then SIGKILL) and fails."},
	"pipeline.steps.cache":                               {Default: "true", Doc: "false: the step never reuses earlier outputs and records none for later runs. With the default, a step whose fingerprint (component, its folder's files, image, inputs, input artifacts' sha256, gang shape) matches an earlier successful step in the same store reuses its outputs."},
	"pipeline.steps.env":                                 {Doc: "Environment variables for the step's program; values may embed {{params.NAME}} and {{item}}. The component's env, and the rank environment of a distributed step, come after and win."},
	"pipeline.steps.env.name":                            {Required: true, Doc: "The variable's name."},
	"pipeline.steps.env.value":                           {Doc: "Its value, as written."},
	"pipeline.steps.secrets":                             {Doc: "Environment variables whose values pipectl never holds: on Kubernetes a key of a Secret (secretKeyRef), locally the variable of that name in the environment pipectl runs in. Never in a compiled workflow, a record, the cache or a message. See `pipectl help secrets`."},
	"pipeline.steps.secrets.env":                         {Required: true, Doc: "The variable's name."},
	"pipeline.steps.secrets.secret":                      {Required: true, Doc: "The Kubernetes Secret's name, or a whole \"{{params.NAME}}\" of a string param or \"{{steps.STEP.outputs.NAME}}\" of a string output."},
	"pipeline.steps.secrets.key":                         {Required: true, Doc: "The Secret's key."},
	"pipeline.steps.secrets.optional":                    {Default: "false", Doc: "true: a Secret or key that is not there (locally, a variable not set) leaves the variable unset instead of failing the step."},
	"pipeline.steps.image":                               {Doc: "Replaces the component's image for this step: the image its pod runs on a cluster. Locally the program runs on this machine, with no image."},
	"pipeline.steps.resources":                           {Doc: "Requests (with equal limits) of the step's pod on Kubernetes; locally they size nothing. cpu, memory, gpu and gpuResource may each be a whole \"{{params.NAME}}\" or \"{{steps.STEP.outputs.NAME}}\", checked when the step starts (not on a distributed step)."},
	"pipeline.steps.resources.cpu":                       {Doc: "A CPU quantity as Kubernetes writes it: 500m, 2, 1.5."},
	"pipeline.steps.resources.memory":                    {Doc: "A memory quantity as Kubernetes writes it: 512Mi, 4Gi, 15G."},
	"pipeline.steps.resources.gpu":                       {Doc: fmt.Sprintf("The number of GPUs (0 to %d); the GPU resource's NoSchedule toleration is added.", MaxGPUs)},
	"pipeline.steps.resources.gpuResource":               {Default: "nvidia.com/gpu", Doc: "The extended resource name of the GPUs, DOMAIN/NAME."},
	"pipeline.steps.resources.extra":                     {Doc: "Other extended resources, by name: quantities."},
	"pipeline.steps.nodeSelector":                        {Doc: "Node labels the step's pod must match (Kubernetes)."},
	"pipeline.steps.tolerations":                         {Doc: "Tolerations of the step's pod (Kubernetes)."},
	"pipeline.steps.tolerations.key":                     {Doc: "The taint key (empty with Exists: every taint)."},
	"pipeline.steps.tolerations.operator":                {Default: "Equal", Values: TolerationOperators, Doc: "How the key's value is matched."},
	"pipeline.steps.tolerations.value":                   {Doc: "The taint value, for Equal."},
	"pipeline.steps.tolerations.effect":                  {Default: "every effect", Values: TolerationEffects, Doc: "The taint effect tolerated."},
	"pipeline.steps.podMetadata":                         {Doc: "Labels and annotations of the step's pod on Kubernetes (a local run has no pod). Not on a distributed step."},
	"pipeline.steps.podMetadata.labels":                  {Doc: "Pod labels; keys under pipectl.dev/ and workflows.argoproj.io/ are refused."},
	"pipeline.steps.podMetadata.annotations":             {Doc: "Pod annotations; a value holding {{ is refused (Argo would evaluate it)."},
	"pipeline.steps.distributed":                         {Doc: "Makes the step a gang of nodes × procsPerNode rank processes with the rank environment torchrun sets (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, …), the same locally and in a JobSet on Kubernetes. When a rank fails the others are stopped and the whole gang restarts, up to maxRestarts. Only rank 0 publishes the outputs. See `pipectl help distributed`."},
	"pipeline.steps.distributed.nodes":                   {Required: true, Doc: fmt.Sprintf("The number of nodes: pods on Kubernetes, groups of processes locally (1 to %d).", MaxNodes)},
	"pipeline.steps.distributed.procsPerNode":            {Default: "the GPUs of a rank pod on Kubernetes, else 1", Doc: fmt.Sprintf("Rank processes per node (1 to %d); WORLD_SIZE is nodes × procsPerNode (at most %d).", MaxProcsPerNode, MaxWorldSize)},
	"pipeline.steps.distributed.runtime":                 {Doc: "A Kubeflow Trainer runtime (ClusterTrainingRuntime, then TrainingRuntime) by name, from the pipeline's runtimes, --runtimes or, with --on argo, the cluster: it gives the step what the step does not set (framework, nodes, procsPerNode, image, env, resources, nodeSelector, tolerations). See `pipectl help kubeflow-trainer`."},
	"pipeline.steps.distributed.framework":               {Default: string(rankenv.Torch), Values: frameworkNames(), Doc: "How the step trains, with the environment Kubeflow Trainer v2 sets for it: torch (the torchrun contract), jax (one process per node, JAX_*), xgboost (one worker per rank, DMLC_*), mpi (the command, mpirun …, runs once on node 0 with a hostfile of every node's slots)."},
	"pipeline.steps.distributed.maxRestarts":             {Default: "0", Doc: fmt.Sprintf("How often the whole gang is restarted after a rank fails or the gang stalls (0 to %d).", MaxRetries)},
	"pipeline.steps.distributed.startupTimeout":          {Default: "10m without a gang scheduler, none with one", Doc: "Bounds the time until every rank's pod runs (Kubernetes); a gang that does not start in time is a failed attempt naming each pod that did not run and why (the scheduler's reason)."},
	"pipeline.steps.distributed.stallTimeout":            {Default: "off", Doc: fmt.Sprintf("How long the gang may go without progress (a line any rank prints, a metric any rank reports) before it is stalled: every rank is stopped and the gang restarts, counting against maxRestarts. Counted from the moment every rank runs (a rank process starts; in the cluster, every rank pod runs: time Pending or waiting for Kueue is startup time), so it must cover rendezvous; at least %s.", MinStallTimeout)},
	"pipeline.steps.distributed.checkpoint":              {Doc: "How the ranks' checkpoint directory, PIPECTL_CHECKPOINT_DIR, is kept: every distributed step has one, stored in the artifact store while the gang runs and when each attempt ends, and restored before any restart, retry or rerun of the step. See `pipectl help checkpoints`."},
	"pipeline.steps.distributed.checkpoint.keep":         {Default: "1", Doc: fmt.Sprintf("How many checkpoints stay in the store (1 to %d).", MaxCheckpointKeep)},
	"pipeline.steps.distributed.checkpoint.every":        {Default: "1m", Doc: "How often the directory is stored while the gang runs; it is also stored whenever a gang attempt ends."},
	"pipeline.steps.distributed.port":                    {Default: "29500 on Kubernetes; a free port locally", Doc: "The rendezvous port, MASTER_PORT."},
	"pipeline.steps.distributed.shmSize":                 {Default: "half the rank's memory limit, else unbounded", Doc: "The size of each rank pod's memory-backed /dev/shm, a quantity such as 8Gi (Kubernetes; locally /dev/shm is the machine's)."},
	"pipeline.steps.distributed.resources":               {Doc: "Requests (with equal limits) of each rank's pod on Kubernetes; GPUs set procsPerNode's default."},
	"pipeline.steps.distributed.nodeSelector":            {Doc: "Node labels each rank's pod must match (Kubernetes)."},
	"pipeline.steps.distributed.tolerations":             {Doc: "Tolerations of each rank's pod (Kubernetes)."},
	"pipeline.steps.distributed.affinity":                {Type: "object", Doc: "A Kubernetes Affinity for each rank's pod, as written."},
	"pipeline.steps.distributed.priorityClass":           {Doc: "The PriorityClass of each rank's pod (Kubernetes)."},
	"pipeline.steps.distributed.gang":                    {Doc: "How all ranks are admitted together on Kubernetes: one of kueue and podGroup."},
	"pipeline.steps.distributed.gang.kueue":              {Doc: "Admit the gang through a Kueue LocalQueue."},
	"pipeline.steps.distributed.gang.kueue.queue":        {Required: true, Doc: "The LocalQueue's name."},
	"pipeline.steps.distributed.gang.podGroup":           {Doc: "Schedule the gang as a PodGroup of a gang scheduler."},
	"pipeline.steps.distributed.gang.podGroup.scheduler": {Required: true, Values: PodGroupSchedulers, Doc: "The gang scheduler."},
	"pipeline.steps.distributed.gang.podGroup.timeout":   {Doc: "The PodGroup's schedule timeout."},
	"pipeline.steps.loop":                                {Doc: "Runs the step once per item: iteration i is the step NAME[i] with its own record, log and outputs; inputs and env read \"{{item}}\" and \"{{item.FIELD}}\". A step reading a loop step's outputs gets them collected: a JSON list, or a directory of the artifacts named 0, 1, …. See `pipectl help loops`."},
	"pipeline.steps.loop.items":                          {Type: "list or string", Doc: fmt.Sprintf("The list: written in YAML (scalars or objects), or a whole \"{{params.NAME}}\" of a json param or \"{{steps.STEP.outputs.OUTPUT}}\" of a json output holding a JSON list; at most %d items.", MaxItems)},
	"pipeline.steps.loop.product":                        {Type: "map[string]list", Doc: "Instead of items, every combination of several lists (a grid), the first outermost: {lr: [0.1, 0.01], seed: \"{{params.seeds}}\"}; item i is an object of the names ({{item.lr}}, {{item.seed}}). A later list may be \"{{item.NAME.FIELD}}\" of an earlier list's item (nested loops)."},
	"pipeline.steps.loop.parallelism":                    {Default: "no bound but the run's", Doc: "At most this many iterations run at once."},
	"pipeline.steps.trigger":                             {Default: TriggerSucceeded, Values: Triggers, Doc: "succeeded: the step runs once every step it depends on succeeded. completed: once each of them ended, whatever its outcome (KFP's ignore_upstream_failure); an input given an output of a step that did not succeed then takes its default."},
	"pipeline.finally":                                   {Doc: "Steps that run after every other step has ended, whatever the outcome (and when the run is stopped). They may read params, \"{{run.status}}\" (Succeeded, Failed or Cancelled), \"{{run.failedSteps}}\" (a JSON list) and other finally steps' outputs. Their fields are a step's."},
	"pipeline.outputs":                                   {Type: "map[string]string or oneOf", Doc: "What a step that uses this pipeline as its component gets: OUTPUT: \"{{steps.STEP.outputs.NAME}}\", or OUTPUT: {oneOf: [REF, REF, …]}, the output of whichever of several steps ran."},

	"component":                      {Doc: "A component file: a program with typed inputs and outputs and its argv (never run through a shell). Locally the program runs in the component file's folder; on Kubernetes in its image, in a copy of that folder."},
	"component.apiVersion":           {Required: true, Values: []string{components.APIVersion}, Doc: "The version of the file format."},
	"component.kind":                 {Required: true, Values: []string{"Component"}, Doc: "What the file holds."},
	"component.metadata":             {Required: true, Doc: "The component's name and description."},
	"component.metadata.name":        {Required: true, Doc: "A DNS-1123 label."},
	"component.metadata.description": {Doc: "Free text."},
	"component.metadata.labels":      {Doc: "Free labels."},
	"component.inputs":               {Doc: "The parameters and artifacts the program takes. Placeholders in command, args and env: {{inputs.NAME}} (a parameter's value), {{inputs.NAME.path}} (an artifact's local path), {{inputs.NAME.uri}}."},
	"component.inputs.name":          {Required: true, Doc: "An identifier: letters, digits and _, not starting with a digit."},
	"component.inputs.type":          {Required: true, Values: ioTypes(), Doc: "A parameter type (string, int, float, bool, json: a value passed as written, once checked) or an artifact type (Dataset, Model, Metrics, Artifact: a file or folder in the store)."},
	"component.inputs.description":   {Doc: "Free text."},
	"component.inputs.default":       {Type: "value of the input's type", Doc: "Makes an input parameter optional: the value when the step gives none."},
	"component.inputs.optional":      {Default: "false", Doc: "Makes an input optional without a default: its placeholders resolve to nothing and the argv element holding one is dropped."},
	"component.outputs":              {Doc: "The artifacts and parameters the program produces: it writes each at {{outputs.NAME.path}} (a file, or a folder for a directory output; a parameter's file holds its value). A Metrics output is a JSON object of numbers. Only rank 0 of a distributed step publishes."},
	"component.outputs.default":      {Type: "value of the output's type", Doc: "Accepted for symmetry with inputs; an output takes its value from the file the program writes."},
	"component.outputs.optional":     {Default: "false", Doc: "Accepted for symmetry with inputs; every declared output must be written."},
	"component.image":                {Doc: "The container image the program runs in on Kubernetes (resolved to name@sha256:… when the run is submitted); a pipeline step's image replaces it. Unused locally."},
	"component.command":              {Required: true, Doc: "The program and its first arguments, with placeholders; started directly, never through a shell. With torchrun as the command, pipectl starts one process per node and torchrun the ranks."},
	"component.args":                 {Doc: "More arguments after command, with placeholders; whole elements {{if present inputs.NAME}} / {{if inputs.NAME}}, {{else}}, {{end}} keep or drop the elements between them."},
	"component.env":                  {Doc: "Environment variables of the program (values may hold placeholders); they win over the step's env."},
	"component.env.name":             {Required: true, Doc: "The variable's name; PIPECTL_*, AWS_* and the rank environment are pipectl's."},
	"component.env.value":            {Doc: "Its value."},
	"component.workingDir":           {Default: "the component file's folder", Doc: "Where the program runs, relative to the component file's folder; an absolute one is a folder of the image (its code in the image)."},
}

// orList is "a, b or c".
func orList(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}
