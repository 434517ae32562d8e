"""An MPI program started by mpirun: every process contributes rank+1 to an
allreduce; rank 0 checks the sum and writes it."""
import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
# One write per line: mpirun forwards every process's output through one
# stream, and a line written in two parts can be split by another's.
os.write(1, f"mpi rank {rank} of {size} on {MPI.Get_processor_name()}: allreduce {total}\n".encode())
if total != size * (size + 1) // 2:
    sys.exit(f"allreduce gave {total}, want {size * (size + 1) // 2}")
if rank == 0:
    with open(sys.argv[1], "w") as f:
        f.write(f"{size} {total}\n")
