package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// component is one running process of the test bed with its log file.
type component struct {
	name    string
	logPath string
	args    []string // bin's arguments and environment, to start it again
	env     []string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process exited
	err     error         // its exit error, set before done closes
}

// startComponent starts bin in its own process group, stdout and stderr going to
// logs/NAME.log; it is killed too should this process die (Pdeathsig).
func startComponent(logDir, name, bin string, args, env []string) (*component, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "+ %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	// Copies: callers build env with append, which may reuse one backing array.
	c := &component{name: name, logPath: logPath, args: slices.Clone(args), env: slices.Clone(env), cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the process has ended.
func (c *component) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the component's process group, and SIGKILL after timeout.
func (c *component) stop(timeout time.Duration) {
	if c.exited() {
		return
	}
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
	// Children that outlived the leader go too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// tail is the last n lines of the component's log.
func (c *component) tail(n int) string {
	return tailFile(c.logPath, n)
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePorts reserves n distinct free loopback ports. The listeners are closed before the
// components start, so another process could take a port in between; on a test machine
// that race is rare and shows as a clear "address already in use" in a component log.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listening lists the ports that something still listens on.
func listening(ports []int) []int {
	var busy []int
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			busy = append(busy, p)
			continue
		}
		l.Close()
	}
	return busy
}

// poll calls check every interval until it returns nil, ctx ends, or one of the watched
// components exits (then its log tail is in the error).
func poll(ctx context.Context, what string, interval time.Duration, watch []*component, check func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		for _, c := range watch {
			if c.exited() {
				return fmt.Errorf("%s: %s exited (%v) before it was ready; log tail:\n%s", what, c.name, c.err, c.tail(30))
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}

// errNotYet is what readiness checks return while waiting.
var errNotYet = errors.New("not yet")
