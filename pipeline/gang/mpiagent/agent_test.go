package mpiagent

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// keysIn writes a new key pair to a new folder.
func keysIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cert, key, err := Keys(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{wire.MPICertKey: cert, wire.MPIKeyKey: key} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startAgent serves an agent with the keys of dir on a loopback port and
// returns the environment of a client: the base port and a hostfile whose
// first host is 127.0.0.1.
func startAgent(t *testing.T, dir string) map[string]string {
	t.Helper()
	cfg, err := Config(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	a := &Agent{TLS: cfg, Dir: t.TempDir(), Env: []string{"NODE_VAR=node-1", "PATH=" + os.Getenv("PATH")}}
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	hostfile := filepath.Join(t.TempDir(), "hostfile")
	if err := os.WriteFile(hostfile, []byte("127.0.0.1 slots=2\nother slots=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		wire.EnvMPIAgentPort:    strconv.Itoa(ln.Addr().(*net.TCPAddr).Port),
		rankenv.EnvOMPIHostfile: hostfile,
	}
}

// The client runs a command line on the agent, in the node's environment
// and folder, with ssh's options before the host ignored, and returns its
// output and exit status.
func TestRshRunsTheCommandOnTheAgent(t *testing.T) {
	dir := keysIn(t)
	env := startAgent(t, dir)
	var out, errOut bytes.Buffer
	r := &Rsh{Getenv: func(k string) string { return env[k] }, KeysDir: dir, Stdout: &out, Stderr: &errOut, ConnectTimeout: 5 * time.Second}
	code, err := r.Run(context.Background(), []string{"-o", "ConnectionAttempts=10", "-x", "127.0.0.1", "echo", `"$NODE_VAR;"`, "'a b'", ";", "echo", "oops", ">&2", ";", "exit", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if code != 7 || out.String() != "node-1; a b\n" || errOut.String() != "oops\n" {
		t.Errorf("exit %d, stdout %q, stderr %q: want 7, %q, %q", code, out.String(), errOut.String(), "node-1; a b\n", "oops\n")
	}
}

// A client with another run's key pair is refused; a host not in the
// hostfile is an error naming it.
func TestRshRefusesAnotherRunsKeys(t *testing.T) {
	env := startAgent(t, keysIn(t))
	var out bytes.Buffer
	r := &Rsh{Getenv: func(k string) string { return env[k] }, KeysDir: keysIn(t), Stdout: &out, Stderr: &out, ConnectTimeout: 5 * time.Second}
	if code, err := r.Run(context.Background(), []string{"127.0.0.1", "echo", "hi"}); err == nil || out.Len() != 0 {
		t.Errorf("another run's keys: exit %d, err %v, output %q: want an error and nothing run", code, err, out.String())
	}
	if _, err := r.Run(context.Background(), []string{"nowhere", "echo", "hi"}); err == nil || !strings.Contains(err.Error(), "host nowhere is not in the hostfile") {
		t.Errorf("unknown host: %v", err)
	}
	if _, _, err := ParseArgs([]string{"-o", "X=1", "host"}); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("no command: %v", err)
	}
}
