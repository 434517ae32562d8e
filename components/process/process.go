package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// DefaultGracePeriod is how long a stopped process gets between SIGTERM and SIGKILL.
const DefaultGracePeriod = 5 * time.Second

// Process describes one program to run.
type Process struct {
	// Argv is the program and its arguments: no shell is involved.
	Argv []string
	// Dir is the working directory ("" for the current one).
	Dir string
	// Env is the full environment.
	Env []string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// Order, if set, records when the process exits relative to the others
	// it watches.
	Order *ExitOrder
	// Guard, if set, kills the process group if this process dies first.
	Guard *Guard
}

// ExitError reports a program that did not exit 0.
type ExitError struct {
	// Code is the exit code, or 128+signal for a program killed by a signal.
	Code int
	// Signal is set when the program was killed by a signal.
	Signal syscall.Signal
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return fmt.Sprintf("killed by signal %d (%s)", int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// StartError reports a program that could not be started: not found
// (Code 127) or not executable (Code 126), as a shell reports them.
type StartError struct {
	Program string
	Code    int
	Err     error
}

func (e *StartError) Error() string {
	if errors.Is(e.Err, exec.ErrNotFound) {
		return fmt.Sprintf("program not found: %s is in no folder of the PATH", e.Program)
	}
	what := "program not found"
	if e.Code == ExitNotExecutable {
		what = "program not executable"
	}
	return fmt.Sprintf("%s: %s: %v", what, e.Program, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// ExitCode returns the exit code err carries: 0 for nil, the code of an
// *ExitError or a *StartError, 1 for any other error.
func ExitCode(err error) int {
	var ee *ExitError
	var se *StartError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &se):
		return se.Code
	default:
		return 1
	}
}

// Running is a started process in its own process group.
type Running struct {
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
	exitedAt time.Time
}

// Start starts p in a new process group, so that stopping it stops every
// process it started too.
func Start(p Process) (*Running, error) {
	if len(p.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	if path, ok := lookPath(p.Argv[0], p.Env); ok {
		cmd.Path, cmd.Err = path, nil
	}
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	cmd.SysProcAttr = sysProcAttr()
	// Output goes through pipes we own, not exec's: exec's Wait would also
	// wait for every process that inherited the pipe (a rank's background
	// child), while we kill the whole group as soon as the leader exits.
	var copies sync.WaitGroup
	var closeAfterStart []*os.File
	pipe := func(w io.Writer) (*os.File, error) {
		if w == nil {
			return nil, nil
		}
		if f, ok := w.(*os.File); ok {
			return f, nil
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		closeAfterStart = append(closeAfterStart, pw)
		copies.Add(1)
		go func() {
			defer copies.Done()
			defer pr.Close()
			_, _ = io.Copy(w, pr)
		}()
		return pw, nil
	}
	stdout, err := pipe(p.Stdout)
	if err != nil {
		return nil, err
	}
	stderr := stdout
	if p.Stderr != p.Stdout {
		if stderr, err = pipe(p.Stderr); err != nil {
			return nil, err
		}
	}
	// A nil *os.File in an io.Writer is not a nil Writer: leave those unset
	// (the program's output then goes to /dev/null).
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	err = cmd.Start()
	for _, f := range closeAfterStart {
		f.Close()
	}
	if err != nil {
		copies.Wait()
		if code := startExitCode(err); code != 0 {
			return nil, &StartError{Program: p.Argv[0], Code: code, Err: err}
		}
		return nil, fmt.Errorf("start %s: %w", p.Argv[0], err)
	}
	if p.Order != nil {
		// Before anything can reap the process. Without pidfds (old
		// kernels) the order falls back to the exit timestamps.
		_ = p.Order.watch(cmd.Process.Pid)
	}
	if p.Guard != nil {
		p.Guard.add(cmd.Process.Pid)
	}
	r := &Running{cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			ws := xe.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				err = &ExitError{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
			} else {
				err = &ExitError{Code: ws.ExitStatus()}
			}
		}
		r.err = err
		r.exitedAt = time.Now()
		// Whatever the leader did, leave nothing of its group behind; then
		// the pipes close and the last output is copied.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if p.Guard != nil {
			p.Guard.remove(cmd.Process.Pid)
		}
		copies.Wait()
		close(r.done)
	}()
	return r, nil
}

// Pid returns the process id (also its process group id).
func (r *Running) Pid() int { return r.cmd.Process.Pid }

// Done is closed when the process has exited.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err is the process's result once Done is closed: nil or an *ExitError.
func (r *Running) Err() error { return r.err }

// ExitedAt is when the process was seen to exit, once Done is closed.
func (r *Running) ExitedAt() time.Time { return r.exitedAt }

// Signal sends sig to the process group.
func (r *Running) Signal(sig syscall.Signal) {
	_ = syscall.Kill(-r.cmd.Process.Pid, sig)
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits until the process has exited. A stopped process (SIGSTOP, a
// debugger's SIGTSTP) is continued after the SIGTERM, so that it handles
// it rather than waiting for the SIGKILL.
func (r *Running) Stop(grace time.Duration) {
	select {
	case <-r.done:
		return
	default:
	}
	r.Signal(syscall.SIGTERM)
	r.Signal(syscall.SIGCONT)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		r.Signal(syscall.SIGKILL)
		<-r.done
	}
}

// Run starts p and waits for it. When ctx ends first, the process group is
// stopped (SIGTERM, then SIGKILL after grace) and ctx's error is returned,
// joined with the program's *ExitError so that its exit code is kept.
// Without a Guard of its own, p gets ctx's (see WithGuard).
func Run(ctx context.Context, p Process, grace time.Duration) error {
	if p.Guard == nil {
		p.Guard = GuardFrom(ctx)
	}
	r, err := Start(p)
	if err != nil {
		return err
	}
	select {
	case <-r.Done():
		return r.Err()
	case <-ctx.Done():
		r.Stop(grace)
		return errors.Join(ctx.Err(), r.Err())
	}
}
