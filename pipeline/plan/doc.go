// Package plan is the one step contract: Build turns a loaded pipeline and
// a step name into the step's plan (Step), and every backend consumes that
// plan. The local runner evaluates it; `pipectl compile` encodes it into the
// workflow; `pipectl exec` and `pipectl launch` decode it in the pods.
// Nothing re-derives a step from environment variables, container args or
// the Kubernetes objects built from it.
//
// A Step holds
//
//   - the invocation: the Component (a components.Program: argv and env
//     templates with their placeholders, typed inputs with their defaults
//     as values, typed outputs; the runtime runs it as it is)
//     and the Wiring (each input parameter's value as a Text of literal,
//     pipeline-parameter and upstream-output parts; each input artifact as
//     the producing step and output; the step's env as Texts);
//   - Deps, When (structured: literal, parameter or upstream output
//     operands), Retries, Timeout (per attempt), Cache;
//   - Image and the step Pod's shape (requests with equal limits, node
//     selector, tolerations with the GPU resource's NoSchedule toleration
//     added when GPUs are requested);
//   - for a distributed step, Distributed: Nodes, ProcsPerNode (as written,
//     else the GPUs per rank pod, else 1; a local run uses
//     LocalProcsPerNode, as written or 1), MaxRestarts, StartupTimeout,
//     StallTimeout, Port,
//     ShmSize (as written, else half the rank's memory limit, else unbounded),
//     the rank Pod (with affinity and priority class) and the Gang (Kueue
//     queue or PodGroup scheduler and timeout).
//
// Values stay the text the loader gives: Build re-encodes nothing, and
// Text.Eval concatenates values without parsing them again (a value holding
// "{{params.x}}" reaches the program as those characters).
//
// A loop step (Step.Loop) has Wiring.Items, a Text whose value is the JSON
// list of its items (a literal, a parameter, or the upstream output that
// travels as the input ItemsInput, "loop-items"), or of a product whose
// lists (Part.Product) are each one of those (an upstream output travelling
// as ProductInputPrefix+NAME) or an Item part, the current item of an
// earlier list or a field of it (pipeline.ProductItems); Values.Iteration selects
// the iteration, whose invocation is the step STEP[i] with {{item}} parts
// evaluated against item i. Wiring.Collected gives an input the outputs of
// every iteration of a loop step (Values.Collected: their records, in
// order): a parameter gets CollectValues' JSON list, an artifact input the
// iterations' URIs (components.Invocation.Collected), fetched as a
// directory of <i> entries. The steps of a pipeline a loop step uses as its
// component loop over its items (pipeline.Step.Body); Wiring.Same gives
// such a step's input the output of the same iteration of another of them
// (iteration i reads OTHER[i]'s outputs record: ResolveSame), on every
// backend from the run's records, as the step waits for all of OTHER. A finally step (Step.Finally) reads
// Values.RunFields through {{run.FIELD}} parts. A step with trigger: completed
// (Step.AfterCompleted) runs whatever the outcome of its Deps, and
// Wiring.OrDefault gives its inputs their outputs, found at run time in
// the run's records when the step succeeded (ResolveOrDefault), else
// nothing: the input takes its default; no such output travels as an
// upstream value (a failed step has none for Argo to pass).
//
// Wiring.ParamInputs gives an input artifact a pipeline parameter of an
// artifact type (a pipeline with artifact params run by itself): the
// parameter's value is the URI of an artifact in the store, whose sha256
// (inputs.AddParamInputs) joins the fingerprint. Wiring.Metadata gives
// such an input the parameter's metadata (pipeline.Param.Metadata, KFP's
// importer metadata), a JSON object whose strings may embed
// {{params.NAME}}: Invocation fills them in (metadata.go) and the program
// gets it in its executor input; it joins the fingerprint too.
//
// Wiring.Invocation is the one evaluation of a plan: with the run-time
// Values (run id, parameter values, upstream output parameter values and,
// locally, the recorded URIs of input artifacts) it makes the
// components.Invocation that the component runtime runs. The local runner,
// `pipectl exec` and each rank pod call it.
//
// # Wire format
//
// Three parts of a plan travel as flags of `pipectl exec` and `pipectl
// launch`, each base64(JSON) (Encode; JSON object keys sorted, so the same
// plan always gives the same text), so that no workflow engine evaluates the
// text inside (component commands hold placeholders; literals may hold
// anything). Each has a version "v"; a reader rejects any other version and
// unknown fields (Decode):
//
//	--component  components.Program, v1: {"v":1, "name", "inputs":[{"name","type","default"?,"optional"?}],
//	             "outputs":[{"name","type"}], "command":[...], "args"?:[...],
//	             "env"?:[{"name","value"}], "workingDir"?}
//	--step       Wiring, v3: {"v":3, "step", "params"?:{INPUT: TEXT}, "inputs"?:{INPUT: {"step","output"}},
//	             "paramInputs"?:{INPUT: PARAM}, "metadata"?:{INPUT: JSON}, "collected"?:{INPUT: {"step","output"}},
//	             "oneOf"?:{INPUT: [{"step","output"}...]}, "same"?:{INPUT: {"step","output"}},
//	             "orDefault"?:{INPUT: {"step","output"}},
//	             "when"?: CONDITION, "items"?: TEXT,
//	             "env"?:[{"name","value": TEXT}]}
//	             where TEXT is [PART...] and PART one of {"lit": S}, {"param": P},
//	             {"upstream": INPUT}, {"item": {"field"?: F}}, {"run": "id"|"status"|"failedSteps"}
//	             ({} is the empty string)
//	--distributed Launch, v2 (distributed steps only): {"v":2, "pipeline", "image", "pipectlImage",
//	             "timeout"?, "nodes", "procsPerNode", "maxRestarts"?, "startupTimeout"?, "stallTimeout"?, "checkpointKeep"?, "checkpointEvery"?, "port"?,
//	             "shmSize"?, "resources", "nodeSelector"?, "tolerations"?, "affinity"?,
//	             "priorityClassName"?, "gang"?:{"kueueQueue"?, "podGroupScheduler"?, "podGroupTimeout"?},
//	             "serviceAccountName"?, "env"?}
//
// Durations are Go's text form ("1h30m0s"); resources, tolerations, affinity
// and env are Kubernetes' JSON. The Component and the Launch are the same
// for every step that runs the component with the same shape (compiled
// workflows share one template for them); the Wiring is the step's own (a
// task argument). Values known only at run time travel in the clear, as
// --run RUN, --param NAME=VALUE and --upstream INPUT=VALUE, each in the
// value encoding of wire.EncodeValue.
//
// Wiring v3 differs from v2: "same" (the inputs a step of a looped
// pipeline reads from the same iteration of another of its steps),
// "when" (a loop step's condition on its item or on such an output,
// evaluated where each iteration runs: Wiring.SkipReason), "metadata"
// (an artifact param's metadata) and "orDefault" (the inputs of a step
// with trigger: completed; a v3 reader before it refuses it as an unknown
// field) are new; a CONDITION is Condition's JSON.
//
// Wiring v2 differs from v1: "paramInputs" (artifact params given at run
// time) and the part {"run": "id"} in any step's text are new, which a v1
// reader would take for an unknown field or a finally step's run field.
//
// Launch v2 differs from v1 (pipectl before the step plan): the GPU
// toleration is in "tolerations" ("gpuResource" is gone), "shmSize" is new,
// and "procsPerNode" defaults to the GPUs per rank pod.
// "stallTimeout" came later within v2: written only when set, so a
// launcher before it refuses only the plans that ask for stall detection.
// "checkpointKeep" and "checkpointEvery" (distributed.checkpoint) came
// later still, the same way.
package plan
