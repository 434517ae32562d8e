package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// markedProcesses returns the pids of the processes whose environment
// holds mark (NAME=value).
func markedProcesses(t *testing.T, mark string) []string {
	t.Helper()
	envs, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, f := range envs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == mark {
				pids = append(pids, filepath.Base(filepath.Dir(f)))
			}
		}
	}
	return pids
}

// TestKill9Run: `pipectl run` killed with SIGKILL during a 2-rank gang
// whose ranks ignore SIGTERM and each started a child. No process of the
// run remains (each carries a marker in its environment), the run reads as
// Failed, "runner died", in `runs ls` and `runs get`, and its work
// directory is gone.
func TestKill9Run(t *testing.T) {
	bin := buildPipectl(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gang.yaml")
	yaml := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: gang}
steps:
  - name: train
    distributed: {nodes: 1, procsPerNode: 2}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      command: [sh, -c, 'trap "" TERM; sleep 300 & echo $RANK >> "$0"; wait; wait', ` + dir + `/started]
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	mark := fmt.Sprintf("PIPECTL_TEST_KILL9=%d", time.Now().UnixNano())
	run := exec.Command(bin, "run", file, "--artifacts", store)
	run.Env = append(os.Environ(), mark, "TMPDIR="+tmp)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(filepath.Join(dir, "started")); bytes.Count(b, []byte("\n")) == 2 {
			break
		}
		if i > 600 {
			run.Process.Kill()
			t.Fatalf("the ranks did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Two ranks, each a shell and its sleep, and the run's watchdog.
	if got := markedProcesses(t, mark); len(got) < 5 {
		t.Errorf("before the kill: %d marked processes, want at least 5", len(got))
	}
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	var left []string
	for i := 0; i < 100; i++ {
		if left = markedProcesses(t, mark); len(left) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		out, _ := exec.Command("ps", append([]string{"-o", "pid,ppid,pgid,stat,args", "-p"}, strings.Join(left, ","))...).CombinedOutput()
		t.Errorf("processes of the run left after its runner was killed:\n%s", out)
		for _, p := range left {
			exec.Command("kill", "-9", p).Run()
		}
	}
	if work, _ := filepath.Glob(filepath.Join(tmp, "pipectl-*")); len(work) > 0 {
		t.Errorf("work directories left: %v", work)
	}
	for _, args := range [][]string{{"runs", "ls", "-o", "json"}, {"runs", "get", "latest", "-o", "json"}} {
		out, err := exec.Command(bin, append(args, "--artifacts", store)...).Output()
		if err != nil {
			t.Fatalf("pipectl %s: %v", strings.Join(args, " "), err)
		}
		if !strings.Contains(string(out), `"status": "Failed"`) || strings.Contains(string(out), `"status": "Running"`) {
			t.Errorf("pipectl %s: want the run Failed, no step Running:\n%s", strings.Join(args, " "), out)
		}
		if args[1] == "get" && !strings.Contains(string(out), `"message": "runner died"`) {
			t.Errorf("pipectl runs get: no message \"runner died\":\n%s", out)
		}
	}
}

// TestKill9MidPublish: `pipectl run` killed with SIGKILL while it copies a
// 300 MB output into the store leaves a partial upload, and its work
// directory goes with it; `pipectl gc` removes the partial upload and
// records the run as Failed for good.
func TestKill9MidPublish(t *testing.T) {
	bin := buildPipectl(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	// temps lists the temporary files below a run's step directories of
	// more than min bytes: not the run record's own atomic create (a kill
	// there leaves no run at all; TestCollectGarbageOrphanRecord has it).
	temps := func(min int64) []string {
		var found []string
		filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(store, p)
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") && strings.Count(rel, string(filepath.Separator)) >= 2 {
				if info, err := d.Info(); err == nil && info.Size() > min {
					found = append(found, p)
				}
			}
			return nil
		})
		return found
	}
	// partial lists the output's upload: over 1 MiB (a small record's
	// atomic write, such as the step's inputs record, is not it).
	partial := func() []string { return temps(1 << 20) }
	stderr := killMidPublish(t, bin, dir, []string{"TMPDIR=" + tmp}, []string{"--artifacts", store}, func() bool { return len(partial()) > 0 })
	if len(partial()) == 0 {
		t.Fatalf("the run finished its upload before it was killed:\n%s", stderr)
	}
	for i := 0; ; i++ {
		work, _ := filepath.Glob(filepath.Join(tmp, "pipectl-*"))
		if len(work) == 0 {
			break
		}
		if i > 100 {
			t.Fatalf("work directories left: %v", work)
		}
		time.Sleep(50 * time.Millisecond)
	}
	gc := exec.Command(bin, "gc", "--artifacts", store, "--work-dir", tmp)
	out, err := gc.CombinedOutput()
	if err != nil {
		t.Fatalf("pipectl gc: %v\n%s", err, out)
	}
	if left := temps(-1); len(left) > 0 {
		t.Errorf("partial uploads left after gc: %v\n%s", left, out)
	}
	record, err := os.ReadFile(filepath.Join(store, newestRun(t, bin, store), "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(record), `"message": "runner died"`) || !strings.Contains(string(record), `"status": "Failed"`) {
		t.Errorf("run.json after gc does not record the run Failed, runner died:\n%s", record)
	}
}

// killMidPublish runs `bin run` on a one-step pipeline (written in dir) whose
// step writes a 300 MB output, with env added to the environment and extra
// arguments; it kills the run with SIGKILL once uploading says the output's
// upload is under way, and returns the run's stderr.
func killMidPublish(t *testing.T, bin, dir string, env, extra []string, uploading func() bool) string {
	t.Helper()
	file := filepath.Join(dir, "big.yaml")
	yaml := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: big}
steps:
  - name: make
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: make}
      outputs: [{name: data, type: Dataset}]
      command: [sh, -c, 'head -c 300000000 /dev/zero > "$0"', '{{outputs.data.path}}']
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, append([]string{"run", file}, extra...)...)
	run.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for began := time.Now(); !uploading(); {
		if time.Since(began) > 30*time.Second {
			run.Process.Kill()
			_ = run.Wait()
			t.Fatalf("no upload seen in 30 s:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	return stderr.String()
}

// newestRun returns the id of the newest run in store.
func newestRun(t *testing.T, bin, store string) string {
	t.Helper()
	out, err := exec.Command(bin, "runs", "ls", "--artifacts", store, "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct{ ID string }
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) == 0 {
		t.Fatalf("runs ls: %v\n%s", err, out)
	}
	return runs[0].ID
}
