package launcher

import (
	"path/filepath"
	"strconv"
	"strings"
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

// Topology is the shape of a gang: Nodes × ProcsPerNode ranks.
type Topology struct {
	Nodes, ProcsPerNode int
	MasterAddr          string
	MasterPort          int
}

// WorldSize is the number of ranks.
func (t Topology) WorldSize() int { return t.Nodes * t.ProcsPerNode }

// NodeEnv returns the variables shared by every process of one node: the
// whole contract but RANK and LOCAL_RANK, which is what a torchrun launcher
// process gets.
func (t Topology) NodeEnv(node int) []string {
	addr, port := t.MasterAddr, strconv.Itoa(t.MasterPort)
	return []string{
		EnvWorldSize + "=" + strconv.Itoa(t.WorldSize()),
		EnvLocalWorldSize + "=" + strconv.Itoa(t.ProcsPerNode),
		EnvNodeRank + "=" + strconv.Itoa(node),
		EnvNNodes + "=" + strconv.Itoa(t.Nodes),
		EnvMasterAddr + "=" + addr,
		EnvMasterPort + "=" + port,
		EnvPetNNodes + "=" + strconv.Itoa(t.Nodes),
		EnvPetNprocPerNode + "=" + strconv.Itoa(t.ProcsPerNode),
		EnvPetNodeRank + "=" + strconv.Itoa(node),
		EnvPetMasterAddr + "=" + addr,
		EnvPetMasterPort + "=" + port,
	}
}

// RankEnv returns the full contract for local process local of node node.
func (t Topology) RankEnv(node, local int) []string {
	return append(t.NodeEnv(node),
		EnvRank+"="+strconv.Itoa(node*t.ProcsPerNode+local),
		EnvLocalRank+"="+strconv.Itoa(local),
	)
}

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
