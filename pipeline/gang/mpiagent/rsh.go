package mpiagent

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// DefaultConnectTimeout bounds the client's retries while a node's agent
// does not answer yet: its pod may still be starting (pulling its image,
// fetching the step's code), which Trainer waits out with JobSet's
// dependsOn and ssh's ConnectionAttempts.
const DefaultConnectTimeout = 5 * time.Minute

// Rsh is `pipectl mpi-rsh`: what OpenMPI runs in place of ssh. It runs the
// command line on host's agent, copying its output to stdout and stderr,
// and returns its exit status.
type Rsh struct {
	// Getenv reads the node's environment (the base port, the hostfile).
	Getenv func(string) string
	// KeysDir holds the run's key pair (default wire.MPIMountPath).
	KeysDir string
	// ConnectTimeout bounds the retries (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Stdout and Stderr receive the command's output.
	Stdout, Stderr io.Writer
}

// sshOptionsWithValue are ssh's options that take a value.
const sshOptionsWithValue = "BbcDEeFIiJLlmOopQRSWw"

// ParseArgs splits OpenMPI's rsh agent arguments, `[SSH OPTIONS] HOST
// COMMAND…`: ssh's options (OMPI_MCA_plm_rsh_args) are accepted and
// ignored, the command words are joined with spaces as ssh joins them.
func ParseArgs(args []string) (host, command string, err error) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1 {
		opt := args[i]
		i++
		if len(opt) == 2 && strings.ContainsRune(sshOptionsWithValue, rune(opt[1])) {
			i++ // its value is the next argument
		}
	}
	if i >= len(args) {
		return "", "", errors.New("expected [ssh options] HOST COMMAND…, as OpenMPI runs its rsh agent: no host")
	}
	host, rest := args[i], args[i+1:]
	if len(rest) == 0 {
		return "", "", fmt.Errorf("host %s: no command to run (pipectl mpi-rsh runs OpenMPI's daemons, not a login shell)", host)
	}
	return host, strings.Join(rest, " "), nil
}

// Port returns the port of host's agent: the base port plus host's line
// in the hostfile.
func (r *Rsh) Port(host string) (int, error) {
	base, err := strconv.Atoi(r.Getenv(wire.EnvMPIAgentPort))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not a port (is this a node pod of an mpi step?)", wire.EnvMPIAgentPort, r.Getenv(wire.EnvMPIAgentPort))
	}
	path := r.Getenv(rankenv.EnvOMPIHostfile)
	if path == "" {
		path = wire.MPIHostfile
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("the hostfile: %w", err)
	}
	i := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if f[0] == host {
			return base + i, nil
		}
		i++
	}
	return 0, fmt.Errorf("host %s is not in the hostfile %s: pipectl's node pods are its hosts", host, path)
}

// Run runs args (ParseArgs') on the host's agent.
func (r *Rsh) Run(ctx context.Context, args []string) (int, error) {
	host, command, err := ParseArgs(args)
	if err != nil {
		return 0, err
	}
	port, err := r.Port(host)
	if err != nil {
		return 0, err
	}
	dir := r.KeysDir
	if dir == "" {
		dir = wire.MPIMountPath
	}
	cfg, err := Config(dir, false)
	if err != nil {
		return 0, err
	}
	c, err := r.dial(ctx, net.JoinHostPort(host, strconv.Itoa(port)), cfg)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	line, _ := json.Marshal(request{Command: command})
	w := bufio.NewWriter(c)
	_, _ = w.Write(append(line, '\n'))
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("the MPI agent of %s: %w", host, err)
	}
	code, err := readFrames(c, r.Stdout, r.Stderr)
	if err != nil {
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		return 0, fmt.Errorf("the MPI agent of %s: %w", host, err)
	}
	return code, nil
}

// dial connects to the agent at addr, retrying while it does not answer
// (the pod starting), up to ConnectTimeout; a refused handshake is final.
func (r *Rsh) dial(ctx context.Context, addr string, cfg *tls.Config) (*tls.Conn, error) {
	timeout := r.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: cfg}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.(*tls.Conn), nil
		}
		var opErr *net.OpError
		if !errors.As(err, &opErr) || opErr.Op != "dial" {
			return nil, fmt.Errorf("the MPI agent at %s: %w", addr, err)
		}
		last = err
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the MPI agent at %s did not answer in %s: %w", addr, timeout, last)
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(time.Second):
		}
	}
}
