// Package kfpv2 reads a KFP v2 pipeline file, the PipelineSpec IR that
// kfp.compiler.Compiler writes (components, deploymentSpec.executors,
// root.dag.tasks, schemaVersion 2.1.0, and optionally a second document of
// platform specs), and writes it as a pipectl pipeline: a YAML node tree in
// pipectl's pipeline format whose nodes carry the lines and columns of the
// KFP file, so that the pipeline loader's checks point into it.
//
// The mapping, in KFP's terms:
//
//   - pipelineInfo.name is the pipeline's name; root.inputDefinitions.parameters
//     are its params (parameterType STRING, NUMBER_INTEGER, NUMBER_DOUBLE,
//     BOOLEAN, LIST, STRUCT are string, int, float, bool, json, json;
//     defaultValue is the default as written; a param without one, even
//     isOptional, is one the run gives); root.inputDefinitions.artifacts
//     are artifact params, each given as the URI of an artifact in the
//     store; an optional TASK_FINAL_STATUS input is a json param;
//     root.dag.outputs are its outputs;
//   - each task of root.dag.tasks is a step named after the task; its
//     componentRef names a component whose executorLabel names a container
//     executor (image, command, args, env), which becomes the step's inline
//     component, or whose dag makes the step a nested pipeline;
//   - a task input is a literal (runtimeValue.constant, as written), a
//     pipeline input (componentInputParameter, componentInputArtifact) or a
//     task output (taskOutputParameter, taskOutputArtifact);
//     dependentTasks are the step's after; cachingOptions.enableCache false
//     (or left out, as KFP reads it) turns the step's cache off;
//     retryPolicy.maxRetryCount is its retries;
//   - artifact types system.Dataset, system.Model and system.Metrics are
//     Dataset, Model and Metrics; any other schemaTitle is Artifact;
//   - triggerPolicy.condition, comparisons (==, !=, <, <=, >, >=, each
//     possibly negated) of a task input with a literal or another input
//     joined by &&, is the step's when (inside a conditional sub-DAG, joined
//     with the enclosing when); the strategy
//     ALL_UPSTREAM_TASKS_COMPLETED on a root task reading an upstream
//     task's output (ignore_upstream_failure()) gives its step trigger:
//     completed (it runs once its dependentTasks ended, an input whose
//     task did not succeed taking its default); on any other root task
//     (dsl.ExitHandler) it makes the task a finally step, and its
//     PipelineTaskFinalStatus input reads the run's status;
//   - a ParallelFor (parameterIterator) is a loop step per task of its body,
//     or one loop step whose component is the body as a pipeline when its
//     tasks read each other's outputs or run sub-DAGs (loop.go,
//     looppipeline.go);
//   - placeholders in command, args and env (see placeholder.go), {{$}}
//     the executor input;
//   - container resources (resources.go) are the step's resources; one
//     given at run time, a whole {{$.inputs.parameters['NAME']}}, is the
//     value of the task's input NAME (a param, a task output's reference
//     or a constant), a resource pipectl gives at run time;
//   - the kubernetes platform spec (platform.go): its podMetadata is the
//     steps' podMetadata, its fieldPathAsEnv of a label or annotation the
//     steps' env, the value podMetadata gives that key ("" for one it does
//     not give).
//   - defaultPipelineRoot is accepted and not used: a pipectl run always
//     names its artifact store (--artifacts, PIPECTL_ARTIFACTS), as a KFP
//     run naming a pipeline root overrides the file's.
//
// A dsl.importer is an artifact param (importer.go): of the root, or of a
// sub-DAG whose input passes a root input parameter down; its URI may name
// an object of Cloud Storage or S3, or a ModelCar (oci://), which the run
// imports into the store first (pipeline/imports), and its metadata is the param's, given to the
// tasks reading it in their executor input (a root task's output in it
// filled in when such a task starts, which waits for that task); a dsl.OneOf
// (valueFromOneof, several artifactSelectors) a oneOf output of the
// nested pipeline the condition group is. What pipectl does not run yet
// (artifactIterator,
// conditions with ||, most platform specs, ...) is an
// error at its line and column, naming the KFP field.
package kfpv2
