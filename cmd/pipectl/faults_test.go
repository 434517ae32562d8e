package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// buildPipectl builds the pipectl binary into a temporary directory.
func buildPipectl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pipectl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// maxRSS returns the peak resident set size of an exited process, in bytes.
func maxRSS(t *testing.T, ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatalf("no rusage for %v", ps)
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss << 10 // kilobytes
}

// TestRunFloodedLog: a step printing about 200 MB of output without a newline,
// as '\r'-separated progress (tqdm) or as one endless line, then failing.
// pipectl's peak memory stays bounded, the step's log holds capped lines,
// and the failure summary quotes a bounded tail.
func TestRunFloodedLog(t *testing.T) {
	bin := buildPipectl(t)
	for _, tc := range []struct {
		name, script string
		logHas       string
	}{
		{"progress", `yes ' 42%|####      | 4200/10000 [00:01<00:02, 4200.00it/s]' | head -n 3500000 | tr '\n' '\r'; exit 3`, " 42%|####"},
		{"one line", `head -c 200000000 /dev/zero | tr '\0' x; exit 3`, "more bytes of this line dropped]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "flood.yaml")
			yaml := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: flood}
steps:
  - name: flood
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: flood}
      command: [sh, -c, "` + strings.ReplaceAll(tc.script, `\`, `\\`) + `"]
`
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			store := filepath.Join(dir, "store")
			cmd := exec.Command(bin, "run", file, "--artifacts", store)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); err == nil || code == 0 {
				t.Fatalf("pipectl run: %v (exit code %d), want a failed run\n%s", err, code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "exit code 3") {
				t.Errorf("stderr does not report exit code 3:\n%.2000s", stderr.String())
			}
			const maxMem = 150 << 20
			if rss := maxRSS(t, cmd.ProcessState); rss > maxMem {
				t.Errorf("pipectl's peak RSS %d MiB, want at most %d MiB", rss>>20, maxMem>>20)
			} else {
				t.Logf("pipectl's peak RSS %d MiB", rss>>20)
			}
			// The live log's capped line and the summary's tail.
			if n := stderr.Len() + stdout.Len(); n > 256<<10 {
				t.Errorf("pipectl printed %d bytes, want at most 256 KiB:\n%.3000s", n, stderr.String())
			}
			logs := exec.Command(bin, "logs", "latest", "--artifacts", store)
			out, err := logs.Output()
			if err != nil {
				t.Fatalf("pipectl logs: %v", err)
			}
			if len(out) > 1<<20 || !strings.Contains(string(out), tc.logHas) {
				t.Errorf("step log: %d bytes, want at most 1 MiB with %q:\n%.2000s", len(out), tc.logHas, out)
			}
		})
	}
}
