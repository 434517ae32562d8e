// Package podutil is what the commands pods run (exec, launch) share with
// the rest of pipectl's commands: streams, errors and exit codes, signals,
// the artifact store and the cluster clients the launcher needs. It links
// no compiler, no Argo client and no UI, so the pod runtime binary
// (pipectl-pod), which links only it and those commands, stays small.
package podutil
