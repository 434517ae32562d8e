// Package rankenv is the rank environment contract of a distributed step,
// the same locally and on Kubernetes. For N nodes of P processes, every rank
// process gets
//
//	WORLD_SIZE=N*P  RANK=node*P+local  LOCAL_RANK=local  LOCAL_WORLD_SIZE=P
//	NODE_RANK=node  NNODES=N  MASTER_ADDR  MASTER_PORT
//	PET_NNODES  PET_NPROC_PER_NODE  PET_NODE_RANK  PET_MASTER_ADDR  PET_MASTER_PORT
//
// A torchrun process (IsTorchrun) gets the node's part (NodeEnv: all but
// RANK and LOCAL_RANK) and spawns the local ranks itself.
//
// A step's Framework adds Kubeflow Trainer v2's variables for it (one table,
// framework.go): jax JAX_NUM_PROCESSES, JAX_PROCESS_ID,
// JAX_COORDINATOR_ADDRESS (one process per node); xgboost DMLC_TRACKER_URI,
// DMLC_TRACKER_PORT, DMLC_TASK_ID (the rank), DMLC_NUM_WORKER; mpi
// OMPI_MCA_orte_default_hostfile (a hostfile of "HOST slots=N" lines),
// OMPI_MCA_orte_keep_fqdn_hostnames, OMPI_MCA_orte_set_default_slots,
// OMPI_MCA_plm_rsh_args, with the command run once, on node 0. Every name of
// the table is Reserved. The local gang
// (package launcher) sets these per process; on Kubernetes the JobSet's pod
// env carries them and `pipectl exec --gang` reads its Node back
// (NodeFromEnv). The package imports no Kubernetes client.
package rankenv
