package gang

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/process"
)

func shGang(script string, nodes, procs int, dir string) (*Gang, *componentstest.Buffer) {
	out := &componentstest.Buffer{}
	return &Gang{
		Nodes: nodes, ProcsPerNode: procs, Dir: dir,
		Env:         os.Environ(),
		GracePeriod: 2 * time.Second,
		Argv: func(node, local int) ([]string, error) {
			return []string{"sh", "-c", script, "rank", strconv.Itoa(node), strconv.Itoa(local)}, nil
		},
		Output: func(rank int) io.Writer { return out },
	}, out
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	return env
}

func TestGangRankEnv(t *testing.T) {
	dir := t.TempDir()
	script := `env | grep -E '^(WORLD_SIZE|RANK|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|NNODES|MASTER_ADDR|MASTER_PORT|PET_[A-Z_]+)=' | sort > env-$RANK`
	g, out := shGang(script, 2, 2, dir)
	attempts, err := g.Run(context.Background())
	if err != nil || attempts != 1 {
		t.Fatalf("Run = %d, %v; log:\n%s", attempts, err, out)
	}
	port := ""
	for rank := 0; rank < 4; rank++ {
		env := readEnvFile(t, filepath.Join(dir, fmt.Sprintf("env-%d", rank)))
		if port == "" {
			port = env["MASTER_PORT"]
		}
		node, local := rank/2, rank%2
		want := map[string]string{
			"WORLD_SIZE": "4", "RANK": strconv.Itoa(rank), "LOCAL_RANK": strconv.Itoa(local),
			"LOCAL_WORLD_SIZE": "2", "NODE_RANK": strconv.Itoa(node), "NNODES": "2",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
			"PET_NNODES": "2", "PET_NPROC_PER_NODE": "2", "PET_NODE_RANK": strconv.Itoa(node),
			"PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": port,
		}
		if diff := cmp.Diff(want, env); diff != "" {
			t.Errorf("rank %d env (-want +got):\n%s", rank, diff)
		}
	}
	if p, _ := strconv.Atoi(port); p <= 0 {
		t.Errorf("MASTER_PORT = %q", port)
	}
}

// TestGangTorchrun: a torchrun command runs as torchrun would run it, the
// gang starting its workers itself (one per rank, RANK and LOCAL_RANK set,
// torchrun's group and role variables too), torchrun's options read; a
// --nproc-per-node other than the step's fails without a restart.
func TestGangTorchrun(t *testing.T) {
	dir := t.TempDir()
	worker := filepath.Join(dir, "worker")
	script := "#!/bin/sh\necho \"$*\" > \"$(dirname \"$0\")/argv-$RANK\"\nenv | grep -E '^(PET_[A-Z_]+|RANK|LOCAL_RANK|NODE_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|GROUP_RANK|ROLE_RANK|TORCHELASTIC_RESTART_COUNT)=' | sort > \"$(dirname \"$0\")/rank-$RANK\"\n"
	if err := os.WriteFile(worker, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := &componentstest.Buffer{}
	var started []string
	var mu sync.Mutex
	argv := []string{"torchrun", "--nnodes=2", "--nproc_per_node", "3", "--rdzv-backend", "c10d", "--no-python", worker, "--lr", "{{x}}"}
	g := &Gang{
		Nodes: 2, ProcsPerNode: 3, Env: os.Environ(), MaxRestarts: 2,
		Argv: func(node, local int) ([]string, error) {
			mu.Lock()
			started = append(started, fmt.Sprintf("%d/%d", node, local))
			mu.Unlock()
			return argv, nil
		},
		Output: func(int) io.Writer { return out },
	}
	if _, err := g.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v\n%s", err, out)
	}
	sort.Strings(started)
	// Argv(0, 0) is asked once to detect torchrun; then once per rank.
	if diff := cmp.Diff([]string{"0/0", "0/0", "0/1", "0/2", "1/0", "1/1", "1/2"}, started); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	for rank := 0; rank < 6; rank++ {
		node, local := rank/3, rank%3
		env := readEnvFile(t, filepath.Join(dir, fmt.Sprintf("rank-%d", rank)))
		want := map[string]string{"RANK": strconv.Itoa(rank), "LOCAL_RANK": strconv.Itoa(local), "NODE_RANK": strconv.Itoa(node),
			"GROUP_RANK": strconv.Itoa(node), "ROLE_RANK": strconv.Itoa(rank), "WORLD_SIZE": "6", "LOCAL_WORLD_SIZE": "3",
			"PET_NNODES": "2", "PET_NPROC_PER_NODE": "3", "PET_NODE_RANK": strconv.Itoa(node), "PET_MASTER_ADDR": "127.0.0.1",
			"PET_MASTER_PORT": env["PET_MASTER_PORT"], "TORCHELASTIC_RESTART_COUNT": "0"}
		if diff := cmp.Diff(want, env); diff != "" || env["PET_MASTER_PORT"] == "" {
			t.Errorf("rank %d env (-want +got):\n%s", rank, diff)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("argv-%d", rank))); string(got) != "--lr {{x}}\n" {
			t.Errorf("rank %d argv %q, want the script's arguments as written", rank, got)
		}
	}
	// Another shape than the step's: a configuration error, no restart.
	argv = []string{"torchrun", "--nproc-per-node=2", "--no-python", worker}
	started = nil
	attempts, err := g.Run(context.Background())
	var ce *ConfigError
	if !errors.As(err, &ce) || attempts != 1 || !strings.Contains(err.Error(), "torchrun --nproc-per-node 2: the step has 3 processes per node") {
		t.Errorf("Run = %d, %v; want one attempt and a ConfigError", attempts, err)
	}
}

// alive reports whether pid still runs a moment after it was killed (a
// zombie waiting for its reaper does not count).
func alive(pid int) bool {
	for i := 0; i < 50 && running(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return running(pid)
}

func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func readPids(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	matches, _ := filepath.Glob(filepath.Join(dir, "pid-*"))
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestGangFailureStopsTheOthers: rank 1 fails; ranks 0, 2 and 3 (and the
// sleeping children they started) are stopped; the gang restarts
// MaxRestarts times, then fails with rank 1's exit code.
func TestGangFailureStopsTheOthers(t *testing.T) {
	dir := t.TempDir()
	script := `sleep 300 & echo $! > pid-$RANK-$$; echo $$ > pid-leader-$RANK-$$
if [ "$RANK" = 1 ]; then sleep 0.3; echo "rank 1 fails"; exit 3; fi
wait`
	g, out := shGang(script, 2, 2, dir)
	g.MaxRestarts = 2
	var events []string
	g.Logf = func(format string, args ...any) { events = append(events, fmt.Sprintf(format, args...)) }
	start := time.Now()
	attempts, err := g.Run(context.Background())
	took := time.Since(start)
	var re *RankError
	if !errors.As(err, &re) || re.Rank != 1 || process.ExitCode(err) != 3 {
		t.Fatalf("Run err = %v, want rank 1 exit code 3; log:\n%s", err, out)
	}
	if attempts != 3 || len(events) != 2 {
		t.Errorf("attempts = %d, restart events = %q; want 3 attempts and 2 restarts", attempts, events)
	}
	pids := readPids(t, dir)
	if len(pids) != 3*4*2 {
		t.Errorf("recorded %d pids, want 24 (3 attempts × 4 ranks × leader and child)", len(pids))
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d is still running after the gang failed", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Logf("3 failed attempts of 4 ranks took %s", took)
}

func TestGangRestartRecovers(t *testing.T) {
	dir := t.TempDir()
	// Rank 0 fails on the first attempt only.
	script := `if [ "$RANK" = 0 ] && [ ! -e failed-once ]; then touch failed-once; exit 7; fi; echo ok-$RANK`
	g, out := shGang(script, 1, 2, dir)
	g.MaxRestarts = 1
	attempts, err := g.Run(context.Background())
	if err != nil || attempts != 2 {
		t.Fatalf("Run = %d, %v; log:\n%s", attempts, err, out)
	}
	if !strings.Contains(out.String(), "ok-0") || !strings.Contains(out.String(), "ok-1") {
		t.Errorf("log lacks both ranks' success:\n%s", out)
	}
}

func TestGangCancelLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	script := `trap '' TERM; sleep 300 & echo $! > pid-$RANK-c; echo $$ > pid-$RANK-l; wait`
	g, _ := shGang(script, 1, 2, dir)
	g.GracePeriod = 300 * time.Millisecond // the script ignores SIGTERM: SIGKILL must follow
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := g.Run(ctx); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for len(readPids(t, dir)) < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run err = %v, want context.Canceled", err)
	}
	pids := readPids(t, dir)
	if len(pids) != 4 {
		t.Fatalf("recorded %d pids, want 4", len(pids))
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d survived cancellation", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestGangNamesTheRankThatFailedFirst: rank 1 fails; rank 0 notices when
// rank 1's end of a FIFO closes (as a DDP peer sees its socket close) and
// fails 50 ms later. The gang names rank 1, the cause, whatever order the
// exits are reaped in.
func TestGangNamesTheRankThatFailedFirst(t *testing.T) {
	for i := 0; i < 5; i++ {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, "link"), 0o600); err != nil {
			t.Fatal(err)
		}
		script := `if [ "$RANK" = 1 ]; then exec 3>link; exit 3; fi
cat link; sleep 0.05; exit 1`
		g, out := shGang(script, 1, 2, dir)
		_, err := g.Run(context.Background())
		var re *RankError
		if !errors.As(err, &re) || re.Rank != 1 || process.ExitCode(err) != 3 {
			t.Fatalf("try %d: err = %v, want rank 1 with exit code 3; log:\n%s", i, err, out)
		}
	}
}
