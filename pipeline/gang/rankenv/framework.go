package rankenv

import (
	"fmt"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/wire"
)

// Framework is how a distributed step trains: it chooses the variables a
// rank process gets on top of the torchrun contract, and which processes
// run. Its variables are Kubeflow Trainer v2's (its torch, jax, xgboost and
// mpi runtime plugins), in names and meaning.
type Framework string

// The frameworks of a distributed step.
const (
	// Torch is the default: the torchrun contract alone; one process per
	// rank, or one per node when the command is torchrun.
	Torch Framework = "torch"
	// JAX runs one process per node (it drives the node's devices) with
	// JAX_NUM_PROCESSES, JAX_PROCESS_ID and JAX_COORDINATOR_ADDRESS.
	JAX Framework = "jax"
	// XGBoost runs one worker per rank with DMLC_TRACKER_URI,
	// DMLC_TRACKER_PORT, DMLC_TASK_ID and DMLC_NUM_WORKER; rank 0 starts the
	// tracker at DMLC_TRACKER_URI:DMLC_TRACKER_PORT.
	XGBoost Framework = "xgboost"
	// MPI runs the command once, on node 0 (Trainer's launcher), with a
	// hostfile of every node's slots at OMPI_MCA_orte_default_hostfile; the
	// command (mpirun …) starts the ranks.
	MPI Framework = "mpi"
)

// Frameworks lists every framework, the default first.
var Frameworks = []Framework{Torch, JAX, XGBoost, MPI}

// Variables of the frameworks' rank environments (Trainer v2's names).
const (
	EnvJAXNumProcesses       = "JAX_NUM_PROCESSES"
	EnvJAXProcessID          = "JAX_PROCESS_ID"
	EnvJAXCoordinatorAddress = "JAX_COORDINATOR_ADDRESS"

	EnvDMLCTrackerURI  = "DMLC_TRACKER_URI"
	EnvDMLCTrackerPort = "DMLC_TRACKER_PORT"
	EnvDMLCTaskID      = "DMLC_TASK_ID"
	EnvDMLCNumWorker   = "DMLC_NUM_WORKER"

	EnvOMPIHostfile     = "OMPI_MCA_orte_default_hostfile"
	EnvOMPIKeepFQDN     = "OMPI_MCA_orte_keep_fqdn_hostnames"
	EnvOMPIDefaultSlots = "OMPI_MCA_orte_set_default_slots"
	EnvOMPIRSHArgs      = "OMPI_MCA_plm_rsh_args"
	defaultOMPIRSHArgs  = "-o ConnectionAttempts=10"
	defaultOMPIKeepFQDN = "true"
)

// Kind says what a variable's value depends on.
type Kind int

const (
	// Const is the same in every process of the gang.
	Const Kind = iota
	// NodeIndex is the node's index (a pod's Job completion index).
	NodeIndex
	// GlobalRank is the process's rank (the completion index when a pod
	// is one rank process).
	GlobalRank
	// LocalRank is the process's rank within its node.
	LocalRank
)

// variable is one row of the table: a name, what its value depends on and,
// for Const, the value.
type variable struct {
	name  string
	kind  Kind
	value func(t Topology) string
}

func constant(name string, value func(t Topology) string) variable {
	return variable{name: name, kind: Const, value: value}
}

func itoa(f func(t Topology) int) func(t Topology) string {
	return func(t Topology) string { return strconv.Itoa(f(t)) }
}

// torchVars is the contract every framework's processes get (the torchrun
// one); the rank-level rows are left out of a node's process.
var torchVars = []variable{
	constant(EnvWorldSize, itoa(Topology.WorldSize)),
	constant(EnvLocalWorldSize, itoa(func(t Topology) int { return t.ProcsPerNode })),
	{name: EnvNodeRank, kind: NodeIndex},
	constant(EnvNNodes, itoa(func(t Topology) int { return t.Nodes })),
	constant(EnvMasterAddr, func(t Topology) string { return t.MasterAddr }),
	constant(EnvMasterPort, itoa(func(t Topology) int { return t.MasterPort })),
	constant(EnvPetNNodes, itoa(func(t Topology) int { return t.Nodes })),
	constant(EnvPetNprocPerNode, itoa(func(t Topology) int { return t.ProcsPerNode })),
	{name: EnvPetNodeRank, kind: NodeIndex},
	constant(EnvPetMasterAddr, func(t Topology) string { return t.MasterAddr }),
	constant(EnvPetMasterPort, itoa(func(t Topology) int { return t.MasterPort })),
	{name: EnvRank, kind: GlobalRank},
	{name: EnvLocalRank, kind: LocalRank},
}

// named gives a framework's processes its name (PIPECTL_FRAMEWORK), which
// `pipectl exec --gang` reads back in a rank pod (NodeFromEnv); torch's,
// the default, is left unset.
var named = constant(wire.EnvFramework, func(t Topology) string { return string(t.Framework) })

// frameworkSpec is a framework's row of the table.
type frameworkSpec struct {
	// vars are the framework's own variables, after torchVars.
	vars []variable
	// perNode: one process per node, with the node's variables only.
	perNode bool
	// node0Only: only node 0 runs the command (MPI's launcher).
	node0Only bool
}

// table is THE rank environment of every framework, used by the local gang
// and by the JobSet's rank pods alike.
var table = map[Framework]frameworkSpec{
	Torch: {},
	JAX: {perNode: true, vars: []variable{
		named,
		// One JAX process per node (Trainer: the number of nodes).
		constant(EnvJAXNumProcesses, itoa(func(t Topology) int { return t.Nodes })),
		{name: EnvJAXProcessID, kind: NodeIndex},
		constant(EnvJAXCoordinatorAddress, func(t Topology) string {
			return t.MasterAddr + ":" + strconv.Itoa(t.MasterPort)
		}),
	}},
	XGBoost: {vars: []variable{
		named,
		// Rank 0 runs the tracker (RabitTracker) at URI:PORT.
		constant(EnvDMLCTrackerURI, func(t Topology) string { return t.MasterAddr }),
		constant(EnvDMLCTrackerPort, itoa(func(t Topology) int { return t.MasterPort })),
		{name: EnvDMLCTaskID, kind: GlobalRank},
		constant(EnvDMLCNumWorker, itoa(Topology.WorldSize)),
	}},
	MPI: {perNode: true, node0Only: true, vars: []variable{
		named,
		constant(EnvOMPIHostfile, func(t Topology) string { return t.Hostfile }),
		constant(EnvOMPIKeepFQDN, func(Topology) string { return defaultOMPIKeepFQDN }),
		constant(EnvOMPIDefaultSlots, itoa(func(t Topology) int { return t.Slots() })),
		constant(EnvOMPIRSHArgs, func(Topology) string { return defaultOMPIRSHArgs }),
	}},
}

// ParseFramework returns the framework named s ("" is Torch).
func ParseFramework(s string) (Framework, error) {
	if s == "" {
		return Torch, nil
	}
	f := Framework(s)
	if _, ok := table[f]; !ok {
		names := make([]string, len(Frameworks))
		for i, f := range Frameworks {
			names[i] = string(f)
		}
		return Torch, fmt.Errorf("unknown framework %q: expected one of %s", s, strings.Join(names, ", "))
	}
	return f, nil
}

func (t Topology) spec() frameworkSpec {
	if s, ok := table[t.Framework]; ok {
		return s
	}
	return table[Torch]
}

// PerNode reports whether the framework runs one process per node (with
// NodeEnv) rather than one per rank: JAX and MPI, and torch when argv is
// torchrun.
func (t Topology) PerNode(argv []string) bool {
	s := t.spec()
	return s.perNode || (t.Framework == Torch || t.Framework == "") && IsTorchrun(argv)
}

// Runs reports whether node runs the command at all: every node does but
// with MPI, whose command runs on node 0 only.
func (t Topology) Runs(node int) bool { return !t.spec().node0Only || node == 0 }

// Slots is the number of MPI slots of one host of the hostfile: the
// processes per node on Kubernetes; locally (Local) this machine is every
// node, with Nodes × ProcsPerNode slots.
func (t Topology) Slots() int {
	if t.Local {
		return t.WorldSize()
	}
	return t.ProcsPerNode
}

// HostfileOf returns an MPI hostfile (Trainer's "HOST slots=N" lines) of
// hosts, each with Slots slots.
func (t Topology) HostfileOf(hosts []string) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s slots=%d\n", h, t.Slots())
	}
	return b.String()
}

// vars returns the rows of the process of node node, local rank local
// (local -1: a node's process, without the rank-level rows).
func (t Topology) vars(node, local int) []string {
	var out []string
	for _, v := range append(append([]variable{}, torchVars...), t.spec().vars...) {
		var val string
		switch v.kind {
		case Const:
			val = v.value(t)
		case NodeIndex:
			val = strconv.Itoa(node)
		case GlobalRank:
			if local < 0 {
				continue
			}
			val = strconv.Itoa(node*t.ProcsPerNode + local)
		case LocalRank:
			if local < 0 {
				continue
			}
			val = strconv.Itoa(local)
		}
		out = append(out, v.name+"="+val)
	}
	return out
}

// PodVar is one variable of a rank pod's environment: a value, or, with
// FromIndex, the pod's Job completion index.
type PodVar struct {
	Name, Value string
	FromIndex   bool
}

// PodEnv returns a rank pod's environment: the whole contract when the pod
// is one rank process (onePerPod: its rank is its node index), else the
// node's part (rank-level variables are set by `pipectl exec --gang` per
// process it starts).
func (t Topology) PodEnv(onePerPod bool) []PodVar {
	var out []PodVar
	for _, v := range append(append([]variable{}, torchVars...), t.spec().vars...) {
		switch v.kind {
		case Const:
			out = append(out, PodVar{Name: v.name, Value: v.value(t)})
		case NodeIndex:
			out = append(out, PodVar{Name: v.name, FromIndex: true})
		case GlobalRank:
			if onePerPod {
				out = append(out, PodVar{Name: v.name, FromIndex: true})
			}
		case LocalRank:
			if onePerPod {
				out = append(out, PodVar{Name: v.name, Value: "0"})
			}
		}
	}
	return out
}

// reserved is every variable of the table.
func reserved(name string) bool {
	for _, v := range torchVars {
		if v.name == name {
			return true
		}
	}
	for _, s := range table {
		for _, v := range s.vars {
			if v.name == name {
				return true
			}
		}
	}
	return false
}
