package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// Guard keeps the processes started for a run from outliving the process
// that runs it, even when that process is killed with SIGKILL: each process
// group started with the guard is registered as an empty file named by its
// id in a directory, and a watchdog process (sh) waits for the runner's end
// on a pipe. When the pipe closes without the runner saying it is done (it
// died), the watchdog kills every registered process group and removes the
// paths it was given (the run's work directory). On Linux the kernel also
// kills each group's leader when the runner dies (Pdeathsig); elsewhere the
// watchdog is the only guard.
type Guard struct {
	dir string
	cmd *exec.Cmd
	w   io.WriteCloser
}

// watchdog is the watchdog's script: $1 is the registration directory, the
// other arguments are the paths to remove. It ignores the signals a
// terminal sends to its foreground group.
const watchdog = `trap '' INT TERM HUP QUIT
IFS= read -r line
[ "$line" = done ] && exit 0
dir=$1; shift
for f in "$dir"/*; do
	[ -e "$f" ] && kill -KILL "-${f##*/}" 2>/dev/null
done
rm -rf -- "$@"
`

// StartGuard starts a watchdog that registers process groups in dir (made
// here) and removes remove if this process dies before Close.
func StartGuard(dir string, remove ...string) (*Guard, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", watchdog, "pipectl-watchdog", dir}, remove...)...)
	// Its own group, so that Ctrl-C in a terminal does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the run's watchdog: %w", err)
	}
	return &Guard{dir: dir, cmd: cmd, w: w}, nil
}

func (g *Guard) add(pgid int) {
	if f, err := os.Create(filepath.Join(g.dir, strconv.Itoa(pgid))); err == nil {
		f.Close()
	}
}

func (g *Guard) remove(pgid int) { _ = os.Remove(filepath.Join(g.dir, strconv.Itoa(pgid))) }

// Close tells the watchdog that the run ended normally and waits for it to
// exit: it kills and removes nothing.
func (g *Guard) Close() error {
	_, err := io.WriteString(g.w, "done\n")
	err = errors.Join(err, g.w.Close())
	return errors.Join(err, g.cmd.Wait())
}

type guardKey struct{}

// WithGuard returns a context that makes Run, and the gangs of package
// launcher, register the process groups they start with g.
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// GuardFrom returns the guard of ctx, or nil.
func GuardFrom(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	return g
}
