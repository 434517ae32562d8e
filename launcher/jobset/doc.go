// Package jobset holds the pure builders of what `pipectl launch` creates
// for a distributed step, from the step's plan.Launch: BuildJobSet (one
// replicated job "rank" of N Indexed pods, parallelism = completions = N,
// DNS hostnames and publishNotReadyAddresses on, a failure policy that
// restarts the whole gang BlockingRecreate up to maxRestarts and fails it at
// once on ExitConfig) and BuildPodGroup (the PodGroup of a podGroup gang).
// Each rank pod copies pipectl in with an init container, mounts a
// memory-backed /dev/shm of the plan's ShmSize, and runs `pipectl exec
// --gang` with the rank environment (RankEnvVars: the contract of package
// rankenv, the node rank from the Job completion index). Names (JobSetName,
// MasterAddr) fit Kubernetes' limits. Nothing here calls an API server.
package jobset
