// Package pipeline is the pipeline spec: loading (strict YAML with
// file:line:column errors), validation, parameters and the DAG of steps.
// Its subpackages plan a step (plan), run a pipeline (local) or compile it
// (argo).
//
// # References
//
// Step input and env values may hold {{params.NAME}}; an input may be a
// whole {{steps.STEP.outputs.OUTPUT}}. A loop step's inputs and env may
// hold {{item}} and {{item.FIELD}} (FIELD a dotted path into an object
// item); a finally step's {{run.status}} and {{run.failedSteps}}.
//
// # Loops
//
//	loop:
//	  items: LIST | "{{params.P}}" | "{{steps.S.outputs.O}}"
//	  parallelism: N
//
// runs the step once per item of a JSON list: a YAML list (converted to
// JSON with every scalar as written), a json parameter or a json output
// parameter of a step that does not loop. Items splits the list into the
// items' texts as written; ItemValue gives what {{item}} and
// {{item.FIELD}} are: a JSON string's text, any other JSON value as
// written. Iteration i is the step IterationName(STEP, i) = "STEP[i]".
// parallelism bounds the iterations running at once (0: no bound but the
// run's own). An output of a loop step used by another step is collected:
// a parameter becomes a JSON list of the iterations' values (type json), an
// artifact a directory holding iteration i's artifact as <i>. A loop step
// cannot loop over a collected output, and a collected output cannot feed
// an int, float or bool input, an input parameter (artifacts) or a when.
//
// # Finally
//
// The steps of the pipeline's finally: list run once every other step has
// ended, whatever its outcome (and when the run is stopped). The loader
// appends them to Steps with Step.Finally set. A finally step depends only
// on finally steps, no other step depends on it, and it does not loop. It
// reads the run's outcome as {{run.status}} (Succeeded, Failed or
// Cancelled: the status of the other steps' run) and {{run.failedSteps}} (a
// JSON list of the failed steps' names, iterations as STEP[i]).
//
// # Trigger
//
// A step runs once every step it depends on (Step.Deps) succeeded. With
// trigger: completed (Step.AfterCompleted, KFP's ignore_upstream_failure())
// it runs once each of them ended, whatever its outcome; an input given an
// output of such a step is given it when that step succeeded, else the
// input takes its default (an optional input none). The loader refuses
// what cannot work: such an input without a default or optional: true, an
// output inside a longer text, a loop step's collected outputs, an output
// in the step's when, loop items, Secrets' names or resources; the trigger
// on a step that uses a pipeline and on the steps of a looped pipeline.
//
// # Nested pipelines
//
// A step's component may be a pipeline file (kind: Pipeline; the same
// relative path as a component file). To that step the pipeline is a
// component: its params are the step's inputs (a param with a default is
// optional; types are checked as for a component input) and its
// declared outputs,
//
//	outputs:
//	  OUTPUT: "{{steps.STEP.outputs.NAME}}"
//
// are the step's outputs, typed as the inner outputs they name. A
// pipeline used as a component may declare artifact params (Dataset,
// Model, Metrics, Artifact, without a default), given whole to artifact
// inputs; run itself, such a pipeline's artifact param is given at run time
// as the URI of an artifact in the store (-p data=URI: an output of an
// earlier run), which the steps fetch and check by its sha256. The loader
// expands the step into the pipeline's steps, each named OUTER.INNER
// (NestedSep; deeper nesting gives A.B.C): a reference to a param becomes
// the value the step gives it (a whole "{{params.P}}" the value's YAML node
// as written, a reference inside longer text the value's text, or the
// step output's reference there), or the param's default; references between the inner
// steps name the expanded steps; another step's reference to an output of
// the step names the inner step's output; the inner steps wait for what
// the step waits for (after), and a step after the nested step waits for
// all of them; cache: false on the step holds for each inner step, and so
// does its when (joined with && to an inner step's own when).
// Backends and records therefore see plain steps: loops, caching, `logs`
// and `artifacts` work on OUTER.INNER as on any step. The steps of a
// finally step's pipeline are finally steps.
// Refused, each at its file:line:col: a pipeline that uses itself,
// directly or through others (naming the chain of files), one with finally
// steps, and on the step that uses it loop, retries, timeout, image, env,
// resources, nodeSelector, tolerations and distributed (set them on the
// inner steps); a declared output naming an unknown step or output, a loop
// step or a finally step.
//
// A KFP v1 graph component (implementation.graph) used as a step's
// component is a nested pipeline too: its inputs are the params, its tasks
// the steps, its outputValues the outputs; kfpgraph.go says how each part
// maps and how a task's componentRef is found offline.
package pipeline
