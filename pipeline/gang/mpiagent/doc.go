// Package mpiagent starts OpenMPI's daemons on the node pods of a
// distributed step of framework mpi, without SSH.
//
// Kubeflow Trainer runs sshd in every node pod, with a key pair from a
// per-job Secret, and mpirun reaches the nodes with ssh. pipectl copies its
// own pod runtime into every pod instead, so the image needs no sshd: each
// node pod's `pipectl exec --gang` serves an Agent, and OpenMPI's rsh agent
// (OMPI_MCA_plm_rsh_agent) is `pipectl mpi-rsh` (Rsh), which asks the
// agent of the host to run the daemon's command and relays its output and
// exit status, as ssh does. Agent and client authenticate each other by
// mutual TLS with one key pair made per run (Keys), kept in the step's
// Secret and deleted with it; the command runs with the node's rank
// environment, in the step's working directory.
//
// Node i's agent listens on the base port (wire.EnvMPIAgentPort) + i, i
// being the host's line in the hostfile: ports never collide, even where
// every pod shares one address.
package mpiagent
