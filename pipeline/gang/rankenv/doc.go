// Package rankenv is the rank environment contract of a distributed step,
// the same locally and on Kubernetes. For N nodes of P processes, every rank
// process gets
//
//	WORLD_SIZE=N*P  RANK=node*P+local  LOCAL_RANK=local  LOCAL_WORLD_SIZE=P
//	NODE_RANK=node  NNODES=N  MASTER_ADDR  MASTER_PORT
//	PET_NNODES  PET_NPROC_PER_NODE  PET_NODE_RANK  PET_MASTER_ADDR  PET_MASTER_PORT
//
// A torchrun process (IsTorchrun) gets the node's part (NodeEnv: all but
// RANK and LOCAL_RANK) and spawns the local ranks itself. The local gang
// (package launcher) sets these per process; on Kubernetes the JobSet's pod
// env carries them and `pipectl exec --gang` reads its Node back
// (NodeFromEnv). The package imports no Kubernetes client.
package rankenv
