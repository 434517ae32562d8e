package mpiagent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The client's end stops the command (its process group killed), as the
// end of an ssh session does.
func TestRshEndStopsTheCommand(t *testing.T) {
	dir := keysIn(t)
	env := startAgent(t, dir)
	marker := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	r := &Rsh{Getenv: func(k string) string { return env[k] }, KeysDir: dir, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, ConnectTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, []string{"127.0.0.1", "sleep 60 & echo $! >" + marker + "; wait"})
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(marker)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the command did not start")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("Run of a cancelled context: no error")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after the client went", pid)
		}
	}
}
