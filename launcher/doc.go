// Package launcher is the Kubernetes launcher behind `pipectl launch`: it
// runs a distributed step as a gang-scheduled JobSet. The local gang of rank
// processes (and a rank pod's node of it) is package gang; the rank
// environment contract both share with rank pods is package rankenv.
//
// # Kubernetes
//
// jobset.BuildJobSet (pure) turns a step's plan.Launch into a JobSet of one
// replicated job "rank" of N Indexed pods (parallelism = completions = N),
// with DNS hostnames and publishNotReadyAddresses on; BuildPodGroup makes
// the PodGroup of a podGroup gang (package jobset). Launcher.Run creates them, watches the
// JobSet and its pods until the JobSet is Completed or Failed (resuming
// dropped watches), streams every rank's log, and deletes the JobSet.
// CollectOutputs then checks what rank 0 published.
//
// Each rank pod copies pipectl in with an init container (as compiled step
// pods do) and runs `/pipectl/pipectl exec --gang` with the launcher's exec
// flags. The pod's env carries the rank contract (jobset.RankEnvVars): the node
// rank (NODE_RANK, PET_NODE_RANK) comes from the Job completion index
// annotation through the downward API, MASTER_ADDR is rank 0's pod,
// "<jobset>-rank-0-0.<jobset>".
//
//   - One process per pod: the pod is the rank (RANK from the completion
//     index, LOCAL_RANK=0).
//   - The command is torchrun: one process per pod with the node's
//     variables (no RANK); torchrun spawns the P local ranks.
//   - Otherwise, P > 1: exec --gang (gang.ExecNode) spawns the P local rank
//     processes itself with rankenv.Topology.RankEnv, prefixes each one's lines
//     "[rank R] ", and stops them all when one fails.
//
// Every rank pod mounts a memory-backed emptyDir at /dev/shm, its size
// limit the plan's ShmSize (half the rank's memory limit unless written;
// unbounded without a limit): the container runtime's 64 MiB default makes
// DataLoader workers and NCCL fail with bus errors. The launcher takes the
// gang's shape (nodes, processes per pod) from the plan, never from the
// JobSet it built.
//
// Only global rank 0 writes to the step's output paths; every other rank's
// outputs go to throw-away paths in its pod. Node 0's exec, once its
// processes exited 0, publishes the outputs (artifacts with their metadata)
// and then the step's outputs record (record.OutputsKey:
// <run>/<step>/outputs.json, every output with its type, parameter values
// included). The launcher deletes that record before it creates the JobSet;
// after the JobSet completed it reads the outputs from the record, and
// writes the parameter values to its --output-params directory, where Argo
// reads the step's output parameters.
// A missing output fails the step, naming it.
//
// # Failures
//
// Any failed rank pod fails the Job (backoffLimit 0); the JobSet restarts
// the whole gang up to maxRestarts times, BlockingRecreate (the old pods are
// gone before new ones start). `pipectl exec --gang` exits with
// jobset.ExitConfig (78) on a failure no restart heals (a bad spec, an undeclared input, a
// declared output the program did not write): the Job's podFailurePolicy
// fails the Job on that exit code (reason PodFailurePolicy) and the JobSet's
// failure policy rule fails the JobSet at once.
//
// Without a gang scheduler, the launcher bounds the start of each attempt
// (DefaultStartupTimeout unless the spec says otherwise): when not every
// rank runs by then, it deletes the JobSet and fails naming the pending
// ranks and the scheduler's reasons. With Kueue (the JobSet is created
// suspended and carries the queue label) or a PodGroup, admission is all or
// nothing and only an explicit startupTimeout applies.
package launcher
