package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// frameworksPython runs examples/frameworks/ensure-frameworks.sh (which
// installs Debian's openmpi-bin, python3-mpi4py and python3-xgboost when
// missing) and puts its python3 first on PATH.
func frameworksPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(filepath.Join("..", "..", "examples", "frameworks", "ensure-frameworks.sh")).Output()
	if err != nil {
		t.Fatalf("ensure-frameworks.sh: %v", err)
	}
	t.Setenv("PATH", strings.TrimSpace(string(out))+string(os.PathListSeparator)+os.Getenv("PATH"))
	if os.Getuid() == 0 {
		// Open MPI refuses root unless told twice.
		t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
		t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	}
}

// output reads the content of output name of step s of run.
func (f *fixture) output(run *record.Run, s, name string) string {
	f.t.Helper()
	var b strings.Builder
	ref, err := recordstore.Resolve(context.Background(), f.store, run.ID+"/"+s+"/"+name)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := artifacts.Copy(context.Background(), f.store, ref.Key, &b, ref.Meta.SHA256); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

// TestRunFrameworks runs examples/frameworks with real XGBoost (two
// workers and rank 0's tracker), real Open MPI (mpirun over the hostfile's
// 4 slots, an allreduce) and a JAX probe of Trainer's JAX_* variables.
func TestRunFrameworks(t *testing.T) {
	frameworksPython(t)
	f := newFixture(t)
	p, err := pipeline.Load(filepath.Join("..", "..", "examples", "frameworks", "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, f.status, f.logs)
	}
	logs := f.logs.String()

	// XGBoost: both workers built the same model, each from its own shard.
	sums := regexp.MustCompile(`\[xgboost rank (\d)\] worker (\d) of 2: trained on 4000 rows, model sha256 ([0-9a-f]{64})`).FindAllStringSubmatch(logs, -1)
	if len(sums) != 2 || sums[0][3] != sums[1][3] || sums[0][1] == sums[1][1] {
		t.Errorf("xgboost workers' models %q, want the same model from ranks 0 and 1:\n%s", sums, logs)
	}
	var m struct {
		Accuracy float64
		Workers  int
	}
	if err := json.Unmarshal([]byte(f.output(run, "xgboost", "metrics")), &m); err != nil || m.Workers != 2 || m.Accuracy < 0.85 {
		t.Errorf("xgboost metrics %+v (%v), want 2 workers, held-out accuracy >= 0.85", m, err)
	}
	if model := f.output(run, "xgboost", "model"); !strings.Contains(model, `"learner"`) {
		t.Errorf("xgboost model is not an XGBoost JSON model: %.200s", model)
	}

	// MPI: mpirun ran once and started one process per slot of the hostfile
	// (their lines come through rank 0's mpirun, which may interleave them).
	for r := 0; r < 4; r++ {
		if !strings.Contains(logs, fmt.Sprintf("mpi rank %d of 4 on ", r)) {
			t.Errorf("no line of MPI rank %d (through rank 0's mpirun):\n%s", r, logs)
		}
	}
	if strings.Contains(logs, "[mpi rank 1]") {
		t.Errorf("an mpi step ran a process for rank 1; mpirun runs on node 0 only:\n%s", logs)
	}
	if got := f.output(run, "mpi", "result"); got != "4 10\n" {
		t.Errorf("mpi result %q, want %q (4 processes, allreduce of 1+2+3+4)", got, "4 10\n")
	}

	// JAX: one process per node, each with its JAX_PROCESS_ID.
	for r := 0; r < 2; r++ {
		if !regexp.MustCompile(fmt.Sprintf(`\[jax rank %d\] jax process %d of 2, coordinator 127\.0\.0\.1:\d+`, r, r)).MatchString(logs) {
			t.Errorf("no line of JAX process %d:\n%s", r, logs)
		}
	}
	if seen := f.output(run, "jax", "seen"); !strings.Contains(seen, `"num_processes": 2`) {
		t.Errorf("jax probe saw %s", seen)
	}
}
