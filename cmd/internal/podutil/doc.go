// Package podutil is what the commands pods run (exec; launch, with
// podkube) share with the rest of pipectl's commands: streams, errors and
// exit codes, signals, the artifact store. It links no compiler, no Argo
// or Kubernetes client and no UI, so the pod runtime binary (pipectl-pod),
// which links only it and exec, stays small.
package podutil
