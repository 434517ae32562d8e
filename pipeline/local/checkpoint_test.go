package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline/checkpoint"
)

// torchPython runs examples/attrition/ensure-torch.sh and puts its
// python3 (one that imports torch) first on PATH.
func torchPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(filepath.Join("..", "..", "examples", "attrition", "ensure-torch.sh")).Output()
	if err != nil {
		t.Fatalf("ensure-torch.sh: %v", err)
	}
	t.Setenv("PATH", strings.TrimSpace(string(out))+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// resumeTrain is a DDP training (gloo, 2 ranks) that resumes from
// PIPECTL_CHECKPOINT_DIR/ckpt.pt, saves it after every epoch (rank 0,
// written to a .tmp name and renamed), reports each epoch's loss to
// PIPECTL_METRICS (each rank) and whose rank 1 dies at epoch CRASH the
// first time (while the file MARKER does not exist), or with a fourth
// argument "stop" goes silent there (stops itself: SIGSTOP), its peer
// blocked in the epoch's all-reduce.
const resumeTrain = `
import os, signal, sys
print(f"rank {os.environ['RANK']} imports torch", flush=True)
import torch, torch.distributed as dist
epochs, crash, marker = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "crash"
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
path = os.path.join(os.environ["PIPECTL_CHECKPOINT_DIR"], "ckpt.pt")
start = 0
if os.path.exists(path):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["epoch"] + 1
print(f"rank {rank} starts at epoch {start}", flush=True)
x = torch.randn(64, 4, generator=torch.Generator().manual_seed(1))
y = x.sum(1, keepdim=True)
for epoch in range(start, epochs):
    print(f"rank {rank} epoch {epoch}", flush=True)
    if epoch == crash and rank == 1 and not os.path.exists(marker):
        open(marker, "w").close()
        if mode == "stop":
            print(f"rank 1 goes silent at epoch {epoch}", flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)
        os._exit(3)
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with open(os.environ["PIPECTL_METRICS"], "a") as m:
        m.write(f'{{"step": {epoch}, "loss": {loss.item()}}}\n')
    if rank == 0:
        torch.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict()}, path + ".tmp")
        os.replace(path + ".tmp", path)
    dist.barrier()
print(f"rank {rank} done", flush=True)
`

// resumePipeline is one 2-rank step running resumeTrain for 5 epochs,
// crashing at epoch 3 (args: "stop" to go silent there), with the
// distributed and retry settings given.
func resumePipeline(script, marker, distributed, retries string, args ...string) string {
	extra := ""
	for _, a := range args {
		extra += ", " + strconv.Quote(a)
	}
	return header + `steps:
  - name: train
    retries: ` + retries + `
    distributed: {nodes: 2, ` + distributed + `checkpoint: {keep: 2, every: 1s}}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      command: [python3, ` + strconv.Quote(script) + `, "5", "3", ` + strconv.Quote(marker) + extra + `]
`
}

var rank0Epoch = regexp.MustCompile(`(?m)^\[train rank 0\] rank 0 epoch (\d+)$`)

// rank0Epochs are the epochs rank 0 logged, in order.
func rank0Epochs(logs string) []int {
	var out []int
	for _, m := range rank0Epoch.FindAllStringSubmatch(logs, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// TestCheckpointResumes trains with real PyTorch: a 2-rank gang whose rank
// 1 dies at epoch 3 resumes at epoch 3, not 0, after a gang restart, after
// a retry of the step, and in a rerun of the failed run.
func TestCheckpointResumes(t *testing.T) {
	torchPython(t)
	want := []int{0, 1, 2, 3, 3, 4}
	cases := []struct {
		name, distributed, retries string
		rerun                      bool
	}{
		{"gang restart", "maxRestarts: 1, ", "0", false},
		{"retry", "", "1", false},
		{"rerun", "", "0", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			script := filepath.Join(f.dir, "train.py")
			if err := os.WriteFile(script, []byte(resumeTrain), 0o644); err != nil {
				t.Fatal(err)
			}
			p := f.load(resumePipeline(script, filepath.Join(f.dir, "crashed"), c.distributed, c.retries))
			ctx := context.Background()
			run, err := f.run(ctx, p, nil, nil)
			if c.rerun {
				if err == nil {
					t.Fatalf("first run succeeded; want rank 1's crash to fail it\n%s", f.logs)
				}
				first := run.ID
				run, err = f.run(ctx, p, nil, func(r *Runner) { r.ResumeFrom = first })
				if !regexp.MustCompile(`pipectl: restored checkpoint \d+ of run ` + regexp.QuoteMeta(first)).MatchString(f.logs.String()) {
					t.Errorf("the rerun does not say it restored run %s's checkpoint:\n%s", first, f.logs)
				}
			}
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, f.status, f.logs)
			}
			logs := f.logs.String()
			if got := rank0Epochs(logs); !slices.Equal(got, want) {
				t.Errorf("rank 0 logged epochs %v, want %v (attempt 2 resumes at 3)\n%s", got, want, logs)
			}
			if !strings.Contains(logs, "[train rank 1] rank 1 starts at epoch 3") {
				t.Errorf("rank 1 did not start its second attempt at epoch 3:\n%s", logs)
			}
			objs, err := f.store.List(ctx, checkpoint.Prefix(run.ID, "train"), false)
			if err != nil {
				t.Fatal(err)
			}
			var manifests []string
			for _, o := range objs {
				if strings.HasSuffix(o.Key, ".json") {
					manifests = append(manifests, o.Key)
				}
			}
			if len(manifests) < 1 || len(manifests) > 2 {
				t.Errorf("run %s keeps checkpoints %v, want 1 or 2 (keep: 2)", run.ID, manifests)
			}
		})
	}
}
