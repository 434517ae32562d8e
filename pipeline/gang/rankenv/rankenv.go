package rankenv

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/wire"
)

// Rank environment variables. Every rank process of a distributed step gets
// these, identically locally and on Kubernetes.
const (
	EnvWorldSize      = "WORLD_SIZE"
	EnvRank           = "RANK"
	EnvLocalRank      = "LOCAL_RANK"
	EnvLocalWorldSize = "LOCAL_WORLD_SIZE"
	EnvNodeRank       = "NODE_RANK"
	EnvNNodes         = "NNODES"
	EnvMasterAddr     = "MASTER_ADDR"
	EnvMasterPort     = "MASTER_PORT"
	// torchrun reads its flags from PET_* variables.
	EnvPetNNodes       = "PET_NNODES"
	EnvPetNprocPerNode = "PET_NPROC_PER_NODE"
	EnvPetNodeRank     = "PET_NODE_RANK"
	EnvPetMasterAddr   = "PET_MASTER_ADDR"
	EnvPetMasterPort   = "PET_MASTER_PORT"
)

// Reserved reports whether name is a variable of the rank environment of
// any framework, which pipectl sets in every rank and a step may not set
// itself (Trainer v2 refuses them too).
func Reserved(name string) bool {
	return strings.HasPrefix(name, "PET_") || reserved(name)
}

// Topology is the shape of a gang: Nodes × ProcsPerNode ranks of a
// framework.
type Topology struct {
	Nodes, ProcsPerNode int
	MasterAddr          string
	MasterPort          int
	// Framework chooses the variables on top of torchrun's ("" is Torch).
	Framework Framework
	// Hostfile is the path of MPI's hostfile (OMPI_MCA_orte_default_hostfile).
	Hostfile string
	// Local says the gang runs on this machine alone: MPI's hostfile names
	// it once with every rank's slot.
	Local bool
}

// WorldSize is the number of ranks.
func (t Topology) WorldSize() int { return t.Nodes * t.ProcsPerNode }

// NodeEnv returns the variables shared by every process of one node: the
// whole contract but the rank-level variables (RANK, LOCAL_RANK and the
// framework's), which is what a torchrun, JAX or mpirun process gets.
func (t Topology) NodeEnv(node int) []string { return t.vars(node, -1) }

// RankEnv returns the full contract for local process local of node node.
func (t Topology) RankEnv(node, local int) []string { return t.vars(node, local) }

// IsTorchrun reports whether argv starts torchrun itself (torchrun or
// python -m torch.distributed.run), which spawns the local ranks.
func IsTorchrun(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if filepath.Base(argv[0]) == "torchrun" {
		return true
	}
	if strings.HasPrefix(filepath.Base(argv[0]), "python") {
		for i := 1; i+1 < len(argv); i++ {
			if argv[i] == "-m" {
				return argv[i+1] == "torch.distributed.run" || argv[i+1] == "torch.distributed.launch"
			}
		}
	}
	return false
}

// Node is a rank pod's place in the gang, read from the rank environment
// the JobSet gives the pod (see launcher.RankEnvVars).
type Node struct {
	Topology
	// Index is the node rank.
	Index int
}

// NodeFromEnv reads the rank pod's Node from NNODES, LOCAL_WORLD_SIZE,
// NODE_RANK, MASTER_ADDR, MASTER_PORT, PIPECTL_FRAMEWORK and MPI's hostfile
// path.
func NodeFromEnv(getenv func(string) string) (Node, error) {
	var errs []error
	num := func(name string, min int) int {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			errs = append(errs, fmt.Errorf("$%s=%q: expected an integer >= %d (set by pipectl launch)", name, v, min))
		}
		return n
	}
	n := Node{Topology: Topology{
		Nodes:        num(EnvNNodes, 1),
		ProcsPerNode: num(EnvLocalWorldSize, 1),
		MasterAddr:   getenv(EnvMasterAddr),
		MasterPort:   num(EnvMasterPort, 1),
		Hostfile:     getenv(EnvOMPIHostfile),
	}, Index: num(EnvNodeRank, 0)}
	f, err := ParseFramework(getenv(wire.EnvFramework))
	if err != nil {
		errs = append(errs, fmt.Errorf("$%s: %w (set by pipectl launch)", wire.EnvFramework, err))
	}
	n.Framework = f
	if n.MasterAddr == "" {
		errs = append(errs, fmt.Errorf("$%s is not set (set by pipectl launch)", EnvMasterAddr))
	}
	if len(errs) == 0 && n.Index >= n.Nodes {
		errs = append(errs, fmt.Errorf("$%s=%d: expected less than $%s=%d", EnvNodeRank, n.Index, EnvNNodes, n.Nodes))
	}
	return n, errors.Join(errs...)
}
