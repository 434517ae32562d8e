package rankenv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFrameworkEnv: each framework's variables, in Kubeflow Trainer v2's
// names and meanings, on top of torchrun's contract.
func TestFrameworkEnv(t *testing.T) {
	topo := func(f Framework) Topology {
		return Topology{Nodes: 2, ProcsPerNode: 3, MasterAddr: "js-node-0-0.js", MasterPort: 29500, Framework: f, Hostfile: "/etc/mpi/hostfile"}
	}
	torchNode1 := "WORLD_SIZE=6 LOCAL_WORLD_SIZE=3 NODE_RANK=1 NNODES=2 MASTER_ADDR=js-node-0-0.js MASTER_PORT=29500 " +
		"PET_NNODES=2 PET_NPROC_PER_NODE=3 PET_NODE_RANK=1 PET_MASTER_ADDR=js-node-0-0.js PET_MASTER_PORT=29500"
	for _, tc := range []struct {
		f          Framework
		node, rank string // NodeEnv(1) and RankEnv(1, 2) beyond torch's
	}{
		{Torch, "", ""},
		{"", "", ""},
		{JAX, " PIPECTL_FRAMEWORK=jax JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 JAX_COORDINATOR_ADDRESS=js-node-0-0.js:29500",
			" PIPECTL_FRAMEWORK=jax JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 JAX_COORDINATOR_ADDRESS=js-node-0-0.js:29500"},
		{XGBoost, " PIPECTL_FRAMEWORK=xgboost DMLC_TRACKER_URI=js-node-0-0.js DMLC_TRACKER_PORT=29500 DMLC_NUM_WORKER=6",
			" PIPECTL_FRAMEWORK=xgboost DMLC_TRACKER_URI=js-node-0-0.js DMLC_TRACKER_PORT=29500 DMLC_TASK_ID=5 DMLC_NUM_WORKER=6"},
		{MPI, " PIPECTL_FRAMEWORK=mpi OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile OMPI_MCA_orte_keep_fqdn_hostnames=true OMPI_MCA_orte_set_default_slots=3 OMPI_MCA_plm_rsh_args=-o_ConnectionAttempts=10",
			" PIPECTL_FRAMEWORK=mpi OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile OMPI_MCA_orte_keep_fqdn_hostnames=true OMPI_MCA_orte_set_default_slots=3 OMPI_MCA_plm_rsh_args=-o_ConnectionAttempts=10"},
	} {
		fields := func(s string) []string {
			out := strings.Fields(s)
			for i := range out {
				out[i] = strings.ReplaceAll(out[i], "_ConnectionAttempts", " ConnectionAttempts")
			}
			return out
		}
		if diff := cmp.Diff(fields(torchNode1+tc.node), topo(tc.f).NodeEnv(1)); diff != "" {
			t.Errorf("%q NodeEnv(1) (-want +got):\n%s", tc.f, diff)
		}
		want := fields(torchNode1 + " RANK=5 LOCAL_RANK=2" + tc.rank)
		if diff := cmp.Diff(want, topo(tc.f).RankEnv(1, 2)); diff != "" {
			t.Errorf("%q RankEnv(1, 2) (-want +got):\n%s", tc.f, diff)
		}
	}
}

// TestFrameworkProcesses: which processes each framework runs.
func TestFrameworkProcesses(t *testing.T) {
	py, torchrun := []string{"python3", "x.py"}, []string{"torchrun", "x.py"}
	for _, tc := range []struct {
		f                 Framework
		argv              []string
		perNode, runsNode bool
	}{
		{Torch, py, false, true},
		{Torch, torchrun, true, true},
		{XGBoost, py, false, true},
		{XGBoost, torchrun, false, true},
		{JAX, py, true, true},
		{MPI, []string{"mpirun", "python3", "x.py"}, true, false},
	} {
		topo := Topology{Nodes: 2, ProcsPerNode: 2, Framework: tc.f}
		if got := topo.PerNode(tc.argv); got != tc.perNode {
			t.Errorf("%s %v: PerNode = %v", tc.f, tc.argv, got)
		}
		if !topo.Runs(0) || topo.Runs(1) != tc.runsNode {
			t.Errorf("%s: Runs(0) = %v, Runs(1) = %v, want true, %v", tc.f, topo.Runs(0), topo.Runs(1), tc.runsNode)
		}
	}
}

// TestHostfile: Trainer's "HOST slots=N" lines; locally this machine holds
// every rank's slot.
func TestHostfile(t *testing.T) {
	k8s := Topology{Nodes: 2, ProcsPerNode: 2, Framework: MPI}
	if got, want := k8s.HostfileOf([]string{"a.js", "b.js"}), "a.js slots=2\nb.js slots=2\n"; got != want {
		t.Errorf("hostfile %q, want %q", got, want)
	}
	local := Topology{Nodes: 2, ProcsPerNode: 2, Framework: MPI, Local: true}
	if got, want := local.HostfileOf([]string{"localhost"}), "localhost slots=4\n"; got != want {
		t.Errorf("local hostfile %q, want %q", got, want)
	}
}

func TestReservedAndParse(t *testing.T) {
	for _, name := range []string{"RANK", "PET_ANYTHING", "JAX_PROCESS_ID", "DMLC_TASK_ID", "DMLC_NUM_WORKER", "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "JAX_COORDINATOR_ADDRESS"} {
		if !Reserved(name) {
			t.Errorf("Reserved(%q) = false", name)
		}
	}
	for _, name := range []string{"JAX_PLATFORMS", "OMPI_MCA_btl", "HOME"} {
		if Reserved(name) {
			t.Errorf("Reserved(%q) = true", name)
		}
	}
	if _, err := ParseFramework("pytorch"); err == nil || !strings.Contains(err.Error(), `unknown framework "pytorch": expected one of torch, jax, xgboost, mpi`) {
		t.Errorf("ParseFramework(pytorch) = %v", err)
	}
	if f, err := ParseFramework(""); f != Torch || err != nil {
		t.Errorf("ParseFramework(\"\") = %q, %v", f, err)
	}
}

func TestNodeFromEnvFramework(t *testing.T) {
	env := map[string]string{"NNODES": "2", "LOCAL_WORLD_SIZE": "1", "NODE_RANK": "1", "MASTER_ADDR": "a", "MASTER_PORT": "29500", "PIPECTL_FRAMEWORK": "xgboost"}
	n, err := NodeFromEnv(func(k string) string { return env[k] })
	if err != nil || n.Framework != XGBoost {
		t.Fatalf("NodeFromEnv = %+v, %v", n, err)
	}
	env["PIPECTL_FRAMEWORK"] = "tensorflow"
	if _, err := NodeFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "$PIPECTL_FRAMEWORK") {
		t.Errorf("NodeFromEnv with framework tensorflow: %v", err)
	}
}
