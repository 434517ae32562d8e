"""An MPI program started by mpirun: every process contributes rank+1 to an
allreduce; rank 0 checks the sum and writes it."""
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
print(f"mpi rank {rank} of {size} on {MPI.Get_processor_name()}: allreduce {total}", flush=True)
if total != size * (size + 1) // 2:
    sys.exit(f"allreduce gave {total}, want {size * (size + 1) // 2}")
if rank == 0:
    with open(sys.argv[1], "w") as f:
        f.write(f"{size} {total}\n")
