package mpiagent

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Agent runs OpenMPI's daemons on one node pod for the clients (Rsh) that
// present the run's key pair.
type Agent struct {
	// TLS is the agent's configuration (Config with server true).
	TLS *tls.Config
	// Dir and Env are the commands' working directory and environment:
	// the node's (the step's working directory, its rank environment).
	Dir string
	Env []string
	// Shell runs a command line (default /bin/sh).
	Shell string
	// Logf, when set, says what the agent does (never a command's output).
	Logf func(format string, args ...any)
}

// Listen listens on every address of the node at port base + index, the
// port of node index's agent.
func Listen(ctx context.Context, base, index int) (net.Listener, error) {
	var lc net.ListenConfig
	addr := ":" + strconv.Itoa(base+index)
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the MPI agent of node %d: %w", index, err)
	}
	return ln, nil
}

// Serve serves ln until ctx ends; each connection runs one command, which
// is stopped (its process group killed) when the client goes.
func (a *Agent) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.serve(ctx, tls.Server(c, a.TLS))
		}()
	}
}

func (a *Agent) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(format, args...)
	}
}

// serve runs the command of one connection.
func (a *Agent) serve(ctx context.Context, c *tls.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := c.HandshakeContext(ctx); err != nil {
		a.logf("mpi agent: refused %s: %v", c.RemoteAddr(), err)
		return
	}
	line, err := bufio.NewReader(io.LimitReader(c, maxFrame)).ReadBytes('\n')
	if err != nil {
		a.logf("mpi agent: %s: no request: %v", c.RemoteAddr(), err)
		return
	}
	_ = c.SetDeadline(time.Time{})
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.Command == "" {
		a.logf("mpi agent: %s: a request that is no command", c.RemoteAddr())
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The client's end (the connection closed) stops the command, as
	// sshd's end of a session does.
	go func() {
		_, _ = io.Copy(io.Discard, c)
		cancel()
	}()
	f := &frameWriter{w: c}
	code := a.run(ctx, req.Command, stream{f, frameStdout}, stream{f, frameStderr})
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	_ = f.write(frameExit, b[:])
	_ = c.CloseWrite()
}

// run runs command with the shell in its own process group, killed with
// the group when ctx ends; it returns the exit status (128+signal for a
// signal, 255 when it could not start, as ssh reports).
func (a *Agent) run(ctx context.Context, command string, stdout, stderr io.Writer) int {
	shell := a.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = a.Dir, a.Env, stdout, stderr
	setGroup(cmd)
	a.logf("mpi agent: running a command for mpirun: %.200s", command)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "pipectl mpi agent: %v\n", err)
		return 255
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			killGroup(cmd)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exitStatus(ee)
	}
	return 255
}
