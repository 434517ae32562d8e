// Package pipeline is the pipeline spec: loading (strict YAML with
// file:line:column errors), validation, parameters and the DAG of steps.
// Its subpackages run a pipeline (local) or compile it (argo).
package pipeline
