"""Checks the environment Kubeflow Trainer's jax runtime gives a process, as
jax.distributed.initialize() reads it:

    import jax
    jax.distributed.initialize(
        coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
        num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
        process_id=int(os.environ["JAX_PROCESS_ID"]),
    )

(jax.distributed.initialize() with no arguments reads the same variables.)
Process 0 writes what it saw."""
import json
import os
import sys

n = int(os.environ["JAX_NUM_PROCESSES"])
pid = int(os.environ["JAX_PROCESS_ID"])
host, _, port = os.environ["JAX_COORDINATOR_ADDRESS"].rpartition(":")
problems = []
if n != int(os.environ["NNODES"]):
    problems.append(f"JAX_NUM_PROCESSES={n}, want one process per node ({os.environ['NNODES']})")
if pid != int(os.environ["NODE_RANK"]) or not 0 <= pid < n:
    problems.append(f"JAX_PROCESS_ID={pid}, want the node rank {os.environ['NODE_RANK']}")
if host != os.environ["MASTER_ADDR"] or not port.isdigit():
    problems.append(f"JAX_COORDINATOR_ADDRESS={os.environ['JAX_COORDINATOR_ADDRESS']}, want rank 0's address:port")
if problems:
    sys.exit("; ".join(problems))
print(f"jax process {pid} of {n}, coordinator {host}:{port}", flush=True)
if pid == 0:
    with open(sys.argv[1], "w") as f:
        json.dump({"num_processes": n, "coordinator": f"{host}:{port}"}, f)
