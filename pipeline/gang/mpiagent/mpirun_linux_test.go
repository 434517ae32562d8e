package mpiagent

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// envRshKeys, set, makes the test binary OpenMPI's rsh agent (TestMain):
// Rsh with the key pair of that folder.
const envRshKeys = "MPIAGENT_TEST_RSH_KEYS"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envRshKeys); dir != "" {
		r := &Rsh{Getenv: os.Getenv, KeysDir: dir, Stdout: os.Stdout, Stderr: os.Stderr, ConnectTimeout: 30 * time.Second}
		code, err := r.Run(context.Background(), os.Args[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "mpi-rsh:", err)
			os.Exit(255)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Real Open MPI: mpirun over two "nodes" (two agents on this machine, each
// with its node's environment, on ports base and base+1) × 2 slots, its
// rsh agent the client; the 4 processes of mpi4py allreduce, ranks 0-1 run
// by node 0's agent, 2-3 by node 1's.
func TestMpirunThroughTheAgents(t *testing.T) {
	out, err := exec.Command(filepath.Join("..", "..", "..", "examples", "frameworks", "ensure-frameworks.sh")).Output()
	if err != nil {
		t.Fatalf("ensure-frameworks.sh: %v", err)
	}
	path := strings.TrimSpace(string(out)) + string(os.PathListSeparator) + os.Getenv("PATH")
	dir := keysIn(t)
	cfg, err := Config(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	// Two free consecutive ports, on every address: the hosts are
	// 127.0.0.2 and 127.0.0.3 (Open MPI takes localhost and 127.0.0.1
	// for its own host whatever it is told).
	var lns [2]net.Listener
	for try := 0; lns[1] == nil; try++ {
		if try == 50 {
			t.Fatal("no two consecutive free ports")
		}
		l0, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		l1, err := net.Listen("tcp", ":"+strconv.Itoa(l0.Addr().(*net.TCPAddr).Port+1))
		if err != nil {
			l0.Close()
			continue
		}
		lns = [2]net.Listener{l0, l1}
	}
	base := lns[0].Addr().(*net.TCPAddr).Port
	hostfile := filepath.Join(t.TempDir(), "hostfile")
	if err := os.WriteFile(hostfile, []byte("127.0.0.2 slots=2\n127.0.0.3 slots=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	env := []string{
		"PATH=" + path, "HOME=" + work,
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		// Both hosts are this machine: launch through the agents anyway;
		// and the two "nodes" share one host name and /tmp, where the
		// shared-memory transport's segments of their first local ranks
		// would have one name: TCP between all processes (node pods each
		// have their own, TestArgoRunMPI on the test bed).
		"OMPI_MCA_opal_if_do_not_resolve=1", "OMPI_MCA_btl=tcp,self",
		rankenv.EnvOMPIHostfile + "=" + hostfile, "OMPI_MCA_orte_keep_fqdn_hostnames=true",
		"OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10",
		wire.EnvOMPIRshAgent + "=" + self, envRshKeys + "=" + dir,
		wire.EnvMPIAgentPort + "=" + strconv.Itoa(base),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, ln := range lns {
		a := &Agent{TLS: cfg, Dir: work, Env: append(append([]string{}, env...), "TEST_NODE="+strconv.Itoa(i))}
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		t.Cleanup(func() {
			cancel()
			<-done
		})
	}
	prog := `import os; from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(c.Get_rank() + 1); os.write(1, f"rank {c.Get_rank()} of {c.Get_size()} node {os.environ.get('TEST_NODE')}: {s}\n".encode())`
	cmd := exec.CommandContext(ctx, "mpirun", "python3", "-c", prog)
	cmd.Env, cmd.Dir = env, work
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	got := regexp.MustCompile(`rank \d of 4 node \d: 10`).FindAllString(string(b), -1)
	sort.Strings(got)
	want := []string{"rank 0 of 4 node 0: 10", "rank 1 of 4 node 0: 10", "rank 2 of 4 node 1: 10", "rank 3 of 4 node 1: 10"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mpirun's processes %q: want %q\n%s", got, want, b)
	}
}
