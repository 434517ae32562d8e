package wire

// Names of a distributed step of framework mpi on Kubernetes. Its node pods
// run no sshd: `pipectl exec --gang` serves an agent on each node pod, and
// mpirun reaches it through RshCommand, which OpenMPI runs in place of ssh
// (OMPI_MCA_plm_rsh_agent). Agent and client authenticate each other with a
// per-run key pair (mutual TLS) from the step's Secret.
const (
	// EnvOMPIRshAgent is OpenMPI's variable naming the program mpirun (and
	// each orted, when it spawns a tree) runs to start a daemon on another
	// host: `AGENT [ARGS] HOST COMMAND…`, as it runs ssh.
	EnvOMPIRshAgent = "OMPI_MCA_plm_rsh_agent"
	// RshCommand is the pipectl subcommand OpenMPI runs as its rsh agent.
	RshCommand = "mpi-rsh"
	// RshAgent is EnvOMPIRshAgent's value in a node pod.
	RshAgent = Binary + " " + RshCommand

	// EnvMPIAgentPort is the port of node 0's agent; node i's listens on
	// EnvMPIAgentPort + i (ports of different nodes never collide, even
	// where pods share one address), and the client finds i as the host's
	// line in the hostfile.
	EnvMPIAgentPort = "PIPECTL_MPI_AGENT_PORT"
	// DefaultMPIAgentPort is EnvMPIAgentPort's value: Kubeflow Trainer's
	// sshd port.
	DefaultMPIAgentPort = 2222

	// MPIVolumeName is the volume of the step's Secret in its node pods,
	// mounted read-only at MPIMountPath: the hostfile and the key pair.
	MPIVolumeName = "pipectl-mpi"
	MPIMountPath  = "/etc/pipectl-mpi"
	// MPIHostfileKey, MPICertKey and MPIKeyKey are the Secret's keys (and
	// the files' names under MPIMountPath).
	MPIHostfileKey = "hostfile"
	MPICertKey     = "tls.crt"
	MPIKeyKey      = "tls.key"
	// MPIHostfile is OMPI_MCA_orte_default_hostfile in a node pod.
	MPIHostfile = MPIMountPath + "/" + MPIHostfileKey
)
