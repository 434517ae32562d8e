// Package argo compiles a pipeline to an Argo Workflow (argoproj.io/v1alpha1).
// Each step's plan (package plan) is encoded into its task and template;
// the compiler imports neither the launcher nor a Kubernetes client.
//
// Compile is pure: no environment, no files, no clock; the same pipeline and
// options give the same Workflow, and Marshal gives the same bytes.
//
// # Shape
//
// The workflow has generateName "<pipeline>-"; its name is the run id
// ({{workflow.name}}), so every artifact URI is known in advance:
// <artifacts>/<run-id>/<step>/<output> (see package artifacts). Argo passes
// only small parameters between steps and needs no artifact repository.
//
//   - spec.arguments.parameters: the pipeline's params, in file order, with
//     their defaults (or the -p values given to the compiler) in the value
//     encoding below; overridable at submit with `argo submit -p`.
//
//   - template "main": a DAG with one task per step, named after the step
//     ("step-" is put before a name that starts with a digit, which Argo's
//     enhanced depends does not allow). A task depends on the steps whose
//     outputs it uses, those it names in after and those in its when, with
//     "a.Succeeded && b.Succeeded": as locally, a step runs only when all
//     its dependencies succeeded. when becomes an Argo when (see below).
//     failFast is false: as locally, a failed step skips its dependents while
//     independent branches still start and finish. A step with trigger:
//     completed depends on "(a.Succeeded || a.Failed || a.Errored ||
//     a.Skipped || a.Omitted)" of each dependency, and its pod reads their
//     outputs from their outputs records (no Argo parameter: a failed
//     task has none), each input whose step did not succeed taking its
//     default; the DAG then targets every task (target: "a b c"), so that
//     it fails when any task failed, as locally (Argo otherwise takes the
//     DAG's phase from the branches of its leaf tasks, which such a step
//     succeeding after a failed one would make succeed).
//
//   - one template per distinct component and pod shape (image, resources,
//     nodeSelector, tolerations, retries, timeout and the inputs fed by
//     upstream output parameters), named after the component; steps that
//     share a component and a pod shape share it. Its pod:
//     an init container "pipectl" (the pipectl image, Options.Image) runs
//     `/pipectl/pipectl-pod exec --install /pipectl-install/pipectl`, copying
//     the pod runtime (exec only, a fraction of pipectl's size) into the
//     emptyDir volume "pipectl"; the main container runs
//     the component's image with that volume at /pipectl, as
//
//     /pipectl/pipectl exec --run={{workflow.name}} --work=/pipectl/work \
//     --output-params=/pipectl/outputs --step={{inputs.parameters.step}} \
//     [--param=P={{workflow.parameters.P}}]... \
//     [--upstream=I={{inputs.parameters.in-I}}]... \
//     --cache=MODE --image=IMAGE --component=B64
//
//     Output parameters of the component are Argo output parameters read
//     from /pipectl/outputs/<name>. retries becomes retryStrategy.limit,
//     timeout activeDeadlineSeconds (per attempt, as locally), resources
//     requests and equal limits (gpu as nvidia.com/gpu or gpuResource, with
//     a matching NoSchedule toleration added), nodeSelector and tolerations
//     the pod's; resources given at run time are the template's
//     podSpecPatch (resources.go: an expression that sets a value only when
//     pipectl accepts it; exec gets the values as params and upstream
//     values, resource-FIELD, and fails the step on any other). The env has PIPECTL_ARTIFACTS (Options.Artifacts), and for
//     S3 AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY from the Secret
//     Options.S3Secret by reference, AWS_ENDPOINT_URL_S3 and AWS_REGION.
//
//   - a distributed step is a launcher pod running the pipectl image itself
//     (the binary is at /pipectl/pipectl in that image too) under
//     Options.LauncherServiceAccount, with POD_NAME, POD_UID and
//     POD_NAMESPACE from the downward API (to own the JobSet it creates):
//
//     /pipectl/pipectl launch <the flags of exec but --image> --distributed=B64
//
//     with --work and --output-params under /var/run/pipectl. B64 is
//     base64(JSON(plan.Launch)): the step plan's Distributed part (topology,
//     rank pod resources, placement, /dev/shm size, gang and restart
//     settings) with the rank pods' image and store env. Each rank pod runs
//     `pipectl exec --gang` with the flags the launcher got, minus --distributed
//     (see package launcher).
//
//   - a loop step is one task running the step's template once per item:
//     withSequence {count: N} for a literal list of N items, else withParam
//     over the items' indexes, computed by an expression from the json
//     param or upstream output (decoded from the value encoding):
//
//     {{=toJson(sprig.until(len(sprig.fromJson(DECODED))))}}
//
//     Argo passes each iteration only its index, as the template input
//     "iteration" (exec --iteration={{inputs.parameters.iteration}}); exec
//     evaluates the items itself from the wiring, so Argo never re-encodes
//     an item. Iteration i publishes under <run>/STEP[i]/. A step using a
//     loop step's outputs (collected) reads the iterations' outputs records
//     <run>/STEP[i]/outputs.json, i = 0, 1, … until one is missing (an
//     iteration whose record says it was skipped gives none). The steps
//     of a looped pipeline read each other's outputs of the same
//     iteration from those records too (plan.Wiring.Same), and a loop
//     step's condition on its item or on such an output (plan.Wiring.When)
//     is no Argo when: each iteration's pod evaluates it, and when it is
//     false records the skip in its outputs record and runs nothing. The
//     loop's template is its own (it has the "iteration" input), so 100
//     iterations compile to the same templates as 3.
//
//   - a loop with parallelism: N is bounded by a DAG template of its own,
//     "TASK-loop" with Argo's template parallelism N (which bounds the
//     running children of one invocation of a template): the step's task
//     (its arguments, depends and when) runs that template, whose inputs
//     are the task's arguments; its one task, named as the step's, loops
//     over the step's template with those inputs (withParam reads an
//     upstream list from its input). Status readers (TaskNode,
//     IterationNodes) look through such a template's node.
//
//   - a distributed loop step is a launcher pod per iteration, each with
//     --iteration: the launcher creates the JobSet of STEP[i] (named after
//     the run and STEP-i, labelled pipectl.dev/step=STEP and
//     pipectl.dev/iteration=i), its ranks run `pipectl exec --gang
//     --iteration=i`, so the item, outputs (<run>/STEP[i]/), cache entry and
//     fingerprint are the iteration's, as locally.
//
//   - finally steps are the tasks of a second DAG template "finally", the
//     workflow's onExit (with trigger: completed as in "main"). Each gets {{workflow.status}} and
//     {{workflow.failures}} as the template inputs "run-status" and
//     "run-failures", and exec turns them, with the steps annotation
//     (--argo-steps, base64), into {{run.status}} and {{run.failedSteps}}
//     (see step.RunFields). A distributed finally step's launcher gets them as
//     flags too and passes them on to its ranks.
//
// The workflow is annotated pipectl.dev/steps (AnnotationSteps) with a JSON
// array of {"step", "task"} in the pipeline's order: the task name of every
// step, so that whoever reads the workflow's status (the follower, `pipectl
// runs`) finds each step's nodes without guessing (see StepTasks, TaskNode).
//
// A step's podMetadata is its template's metadata (its pod's own labels
// and annotations). Pods are labelled pipectl.dev/pipeline=<name> and
// pipectl.dev/run={{workflow.name}}; the Workflow object gets the run label
// from spec.workflowMetadata.labelsFrom (its name is not known before).
//
// # Nothing the user wrote is evaluated by Argo
//
// Argo evaluates {{...}} (and {{=expr}}) in templates, the workflow spec and,
// again, in values it has substituted; Kubernetes expands $(VAR) in args and
// env. Component commands hold pipectl placeholders ({{inputs.epochs}}) and
// values may hold anything. So:
//
//   - the component (--component) and the step's wiring (--step: literals,
//     which params and upstream outputs feed which inputs, env) travel as
//     base64(JSON) (components.Program, plan.Wiring: see package plan for the
//     wire format);
//
//   - only Argo's own references travel in the clear: {{workflow.name}},
//     {{workflow.parameters.P}}, {{inputs.parameters.X}},
//     {{tasks.T.outputs.parameters.O}};
//
//   - every value Argo carries (workflow arguments, output parameters) is in
//     the value encoding of wire.EncodeValue: the text itself, or
//     "pipectl-b64:" + base64 when it contains "{{" or "$" (or is not UTF-8,
//     or starts with that prefix); exec decodes. A value given with `argo
//     submit -p` may be plain text or so encoded.
//
//   - when becomes an expression tag whose operands are variables, never
//     text spliced into the expression: for `{{params.p}} == 'x y'`
//
//     {{=trim(hasPrefix(workflow.parameters['p'], 'pipectl-b64:') ? sprig.b64dec(workflow.parameters['p'][12:]) : workflow.parameters['p']) == 'x y'}}
//
//     (literals other than plain words are written as sprig.b64dec('...')).
//     Both sides are compared as trimmed strings, as the local runner does.
//
// # Cache
//
// Each step pod and launcher pod gets --cache=MODE (package stepcache): on,
// off for a step with cache: false, refresh for every other step with
// Options.NoCache; steps that differ only in it get different templates.
// Step pods get --image=IMAGE, their component's image, which is part of
// the fingerprint (a launcher has it in --distributed). The check runs in
// the step's own pod before any work; on a hit exec writes the outputs
// record and output parameters and exits 0, and the launcher creates no
// JobSet. A step pod still starts for a cached step: the fingerprint needs
// the input artifacts' sha256, known only once the upstream steps ran (Argo's
// memoization would need the key at submit time). `pipectl run --on argo`
// resolves at submit time what it can (stepcache.ResolveAll): when every
// step is cached it submits no workflow at all (BenchmarkArgoCachedRerun in
// test/e2e measures both).
package argo
