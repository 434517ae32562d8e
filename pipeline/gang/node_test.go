package gang

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// nodeRequest is a step whose program prints its rank and writes it to its
// model output and its loss parameter.
func nodeRequest(t *testing.T, store artifacts.Store, script string) (execution.Request, *componentstest.Buffer) {
	t.Helper()
	out := &componentstest.Buffer{}
	return execution.Request{
		Invocation: &components.Invocation{
			Component: &components.Program{
				Name:    "train",
				Outputs: []components.ProgramIO{{Name: "model", Type: "Model"}, {Name: "loss", Type: "float"}},
				Command: []string{"sh", "-c", script, "sh", "{{outputs.model.path}}", "{{outputs.loss.path}}"},
			},
			Run: "run-1", Step: "train",
		},
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Stdout:  out, Stderr: out,
	}, out
}

const rankScript = `echo "rank $RANK local $LOCAL_RANK of $WORLD_SIZE"; echo "$RANK" > "$1"; echo 0.5 > "$2"`

// TestExecNodeProcsPerNode: node 1 of 2 with 2 processes per node runs
// ranks 2 and 3, prefixed, and publishes nothing; node 0 publishes rank
// 0's outputs and the outputs record.
func TestExecNodeProcsPerNode(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &execution.Runtime{Store: store}
	topo := rankenv.Topology{Nodes: 2, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}
	ctx := context.Background()

	req, out := nodeRequest(t, store, rankScript)
	if _, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: 1}); err != nil {
		t.Fatalf("node 1: %v", err)
	}
	for _, want := range []string{"[rank 2] rank 2 local 0 of 4\n", "[rank 3] rank 3 local 1 of 4\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("node 1 output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := store.Stat(ctx, record.OutputsKey("run-1", "train")); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("node 1 wrote the outputs record (%v)", err)
	}

	req, _ = nodeRequest(t, store, rankScript)
	params := t.TempDir()
	req.OutputParams = params
	records, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: 0})
	if err != nil {
		t.Fatalf("node 0: %v", err)
	}
	if len(records) != 2 {
		t.Fatalf("records %+v, want model and loss", records)
	}
	if rec, err := recordstore.ReadOutputs(ctx, store, "run-1", "train"); err != nil || len(rec) != 2 {
		t.Fatalf("outputs record %+v, %v", rec, err)
	}
	tmp := filepath.Join(t.TempDir(), "model")
	if _, err := artifacts.Fetch(ctx, store, record.OutputKey("run-1", "train", "model"), tmp, artifacts.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tmp); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("published model %q, want rank 0's", b)
	}
	if b, _ := os.ReadFile(filepath.Join(params, "loss")); string(b) != "0.5" {
		t.Errorf("output parameter loss = %q", b)
	}
}

// TestExecNodeFailures: a failing rank stops the node with its exit code;
// a missing output is a failure no restart heals.
func TestExecNodeFailures(t *testing.T) {
	store, _ := artifacts.NewLocal(t.TempDir())
	rt := &execution.Runtime{Store: store}
	topo := rankenv.Topology{Nodes: 1, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}
	req, _ := nodeRequest(t, store, `if [ "$LOCAL_RANK" = 1 ]; then exit 3; fi; sleep 30`)
	_, err := ExecNode(context.Background(), rt, req, rankenv.Node{Topology: topo})
	var re *RankError
	var ee *process.ExitError
	if !errors.As(err, &re) || re.Rank != 1 || !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("ExecNode = %v, want rank 1's exit code 3", err)
	}

	req, _ = nodeRequest(t, store, `true`)
	_, err = ExecNode(context.Background(), rt, req, rankenv.Node{Topology: rankenv.Topology{Nodes: 1, ProcsPerNode: 1}})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "model, loss") {
		t.Fatalf("ExecNode = %v, want a *ConfigError naming the missing outputs", err)
	}
}

// TestExecNodeNamesTheRankThatFailedFirst: as for a local gang, the ranks
// of one pod are told apart by the kernel's exit order: rank 1 fails, rank 0
// fails 50 ms after it sees rank 1's end of a FIFO close; rank 1 is named.
func TestExecNodeNamesTheRankThatFailedFirst(t *testing.T) {
	store, _ := artifacts.NewLocal(t.TempDir())
	rt := &execution.Runtime{Store: store}
	for i := range 5 {
		link := filepath.Join(t.TempDir(), "link")
		if err := syscall.Mkfifo(link, 0o600); err != nil {
			t.Fatal(err)
		}
		req, out := nodeRequest(t, store, `if [ "$LOCAL_RANK" = 1 ]; then exec 3>`+link+`; exit 3; fi
cat `+link+`; sleep 0.05; exit 1`)
		_, err := ExecNode(context.Background(), rt, req, rankenv.Node{Topology: rankenv.Topology{Nodes: 1, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}})
		var re *RankError
		if !errors.As(err, &re) || re.Rank != 1 || process.ExitCode(err) != 3 {
			t.Fatalf("try %d: ExecNode = %v, want rank 1 with exit code 3; log:\n%s", i, err, out)
		}
	}
}

// TestExecNodeRunsInTheCodePack: in a pod, a program that ships its code
// (Code set, no folder) runs in the code pack Prepare unpacked, and every
// rank sees its files.
func TestExecNodeRunsInTheCodePack(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "train.sh"), []byte(`echo "code rank $RANK"; echo "$RANK" > "$1"; echo 0.5 > "$2"`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pack, _, err := codepack.Ship(ctx, store, src, codepack.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	req, out := nodeRequest(t, store, "")
	prog := *req.Invocation.Component
	prog.Code, prog.Command = pack.Digest, []string{"sh", "train.sh", "{{outputs.model.path}}", "{{outputs.loss.path}}"}
	req.Invocation.Component = &prog
	topo := rankenv.Topology{Nodes: 1, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}
	if _, err := ExecNode(ctx, &execution.Runtime{Store: store}, req, rankenv.Node{Topology: topo}); err != nil {
		t.Fatalf("ExecNode: %v\n%s", err, out.String())
	}
	for _, want := range []string{"[rank 0] code rank 0\n", "[rank 1] code rank 1\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if prog.Dir != "" {
		t.Errorf("the plan's program was changed: Dir %q", prog.Dir)
	}
}

// TestExecNodeMetricsFile: each rank process of a pod has its own
// PIPECTL_METRICS file in the workspace, as in a local gang.
func TestExecNodeMetricsFile(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	topo := rankenv.Topology{Nodes: 2, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}
	req, out := nodeRequest(t, store, `echo "{\"step\": $RANK}" >> "$`+wire.EnvMetrics+`"`)
	if _, err := ExecNode(context.Background(), &execution.Runtime{Store: store}, req, rankenv.Node{Topology: topo, Index: 1}); err != nil {
		t.Fatalf("node 1: %v; log:\n%s", err, out)
	}
	for _, rank := range []int{2, 3} {
		path := filepath.Join(execution.Workspace{Dir: req.WorkDir}.MetricsDir(), fmt.Sprintf("rank-%d.jsonl", rank))
		if b, err := os.ReadFile(path); err != nil || string(b) != fmt.Sprintf("{\"step\": %d}\n", rank) {
			t.Errorf("rank %d metrics file: %q, %v", rank, b, err)
		}
	}
}

// TestExecNodeCheckpoint: a rank pod's ranks get PIPECTL_CHECKPOINT_DIR;
// what rank 0 wrote there is stored when its processes exit, also when
// they failed, and a later pod of the step (a gang restart) on any node
// starts with it.
func TestExecNodeCheckpoint(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &execution.Runtime{Store: store}
	topo := rankenv.Topology{Nodes: 2, ProcsPerNode: 1, MasterAddr: "m", MasterPort: 1}
	ctx := context.Background()
	script := `epoch=$(cat "$PIPECTL_CHECKPOINT_DIR/epoch" 2>/dev/null || echo none); echo "rank $RANK sees $epoch in $PIPECTL_CHECKPOINT_DIR"
if [ "$RANK" = 0 ]; then echo 3 > "$PIPECTL_CHECKPOINT_DIR/epoch.tmp"; mv "$PIPECTL_CHECKPOINT_DIR/epoch.tmp" "$PIPECTL_CHECKPOINT_DIR/epoch"; fi
if [ "$epoch" = none ]; then exit 4; fi; echo 1 > "$1"; echo 0.5 > "$2"`

	// One process per pod: its RANK is the pod's (set by the JobSet).
	req, out := nodeRequest(t, store, script)
	req.Env = append(req.Env, "RANK=0")
	if _, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: 0}); err == nil {
		t.Fatalf("the first attempt succeeded:\n%s", out)
	}
	if want := "rank 0 sees none in " + filepath.Join(req.WorkDir, "checkpoint"); !strings.Contains(out.String(), want) {
		t.Errorf("attempt 1 output lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out.String(), "pipectl: checkpoint 1 kept") {
		t.Errorf("the failed attempt did not keep its checkpoint:\n%s", out)
	}
	for _, index := range []int{1, 0} {
		req, out := nodeRequest(t, store, script)
		req.Env = append(req.Env, fmt.Sprintf("RANK=%d", index))
		if _, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: index}); err != nil {
			t.Fatalf("attempt 2, node %d: %v\n%s", index, err, out)
		}
		if want := fmt.Sprintf("rank %d sees 3", index); !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "pipectl: restored checkpoint 1 of run run-1") {
			t.Errorf("attempt 2, node %d: output lacks %q and the restore:\n%s", index, want, out)
		}
	}
}

// TestExecNodeCheckpointKeepEvery: a rank pod keeps its step's
// distributed.checkpoint as a local gang does: node 0 stores the directory
// every Every while its ranks run (not only when they exit), only the
// latest Keep checkpoints stay, and a rerun's pod (From) starts from the
// run it resumes.
func TestExecNodeCheckpointKeepEvery(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &execution.Runtime{Store: store}
	topo := rankenv.Topology{Nodes: 1, ProcsPerNode: 1, MasterAddr: "m", MasterPort: 1}
	ctx := context.Background()
	// Each epoch is written, then held long enough for a periodic sync; the
	// last one (epoch 4) only the sync at exit can take.
	script := `d="$PIPECTL_CHECKPOINT_DIR"; start=$(cat "$d/epoch" 2>/dev/null || echo 0); echo "starts after epoch $start"
for e in $(seq $((start+1)) $((start+4))); do echo $e > "$d/epoch.tmp"; mv "$d/epoch.tmp" "$d/epoch"; sleep 0.4; done
echo 1 > "$1"; echo 0.5 > "$2"`
	req, out := nodeRequest(t, store, script)
	req.Env = append(req.Env, "RANK=0")
	req.Checkpoint = checkpoint.Options{Keep: 2, Every: 100 * time.Millisecond}
	if _, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: 0}); err != nil {
		t.Fatalf("ExecNode: %v\n%s", err, out)
	}
	kept := strings.Count(out.String(), "pipectl: checkpoint ")
	if kept < 4 {
		t.Errorf("%d checkpoints kept; want one per epoch (4), synced every 100ms while the rank ran:\n%s", kept, out)
	}
	objs, err := store.List(ctx, checkpoint.Prefix("run-1", "train"), false)
	if err != nil {
		t.Fatal(err)
	}
	var manifests []string
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".json") {
			manifests = append(manifests, path.Base(o.Key))
		}
	}
	if want := fmt.Sprintf("%08d.json %08d.json", kept-1, kept); strings.Join(manifests, " ") != want {
		t.Errorf("store holds checkpoints %q, want the latest 2: %s", manifests, want)
	}

	// A rerun (run-2, resuming from run-1) starts after epoch 4.
	req, out = nodeRequest(t, store, script)
	req.Invocation.Run = "run-2"
	req.Env = append(req.Env, "RANK=0")
	req.Checkpoint = checkpoint.Options{From: "run-1"}
	if _, err := ExecNode(ctx, rt, req, rankenv.Node{Topology: topo, Index: 0}); err != nil {
		t.Fatalf("ExecNode of the rerun: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "starts after epoch 4") || !strings.Contains(out.String(), "of run run-1") {
		t.Errorf("the rerun did not start from run-1's last checkpoint:\n%s", out)
	}
}
