package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// runInContainer is the agent's exec: only signalling a container's process, which is how
// Argo's controller stops a step (`argoexec kill SIGNAL 1` in the wait and main containers)
// and what `kill [-SIGNAL] 1` asks. The signal goes to the container's processes as on
// deletion (signalGroup); other commands are refused.
func (r *runtime) runInContainer(_ context.Context, ns, pod, container string, cmd []string, _ api.AttachIO) error {
	sig, ok := killCommand(cmd)
	if !ok {
		return errdefs.InvalidInput(fmt.Sprintf("exec is not supported by the pipectl node agent, but for `kill [-SIGNAL] 1` and `argoexec kill SIGNAL 1` (got %q)", cmd))
	}
	p, err := r.lookup(ns, pod)
	if err != nil {
		return err
	}
	pid := 0
	p.mu.Lock()
	for _, s := range append(append(p.init[:0:0], p.init...), p.main...) {
		if s.Name == container && s.State.Running != nil {
			pid, _ = strconv.Atoi(strings.TrimPrefix(s.ContainerID, "proc://"))
		}
	}
	p.mu.Unlock()
	if pid <= 0 {
		return errdefs.NotFoundf("container %s of pod %s/%s is not running", container, ns, pod)
	}
	r.log.Info("exec: signal", "pod", p.key, "container", container, "signal", int(sig))
	signalGroup(pid, sig)
	return nil
}

// killCommand recognises `argoexec kill SIGNAL 1` (any path to argoexec) and
// `kill [-SIGNAL] 1` and returns the signal.
func killCommand(cmd []string) (syscall.Signal, bool) {
	var sig, target string
	switch {
	case len(cmd) == 4 && filepath.Base(cmd[0]) == "argoexec" && cmd[1] == "kill":
		sig, target = cmd[2], cmd[3]
	case len(cmd) == 3 && filepath.Base(cmd[0]) == "kill" && strings.HasPrefix(cmd[1], "-"):
		sig, target = cmd[1][1:], cmd[2]
	case len(cmd) == 2 && filepath.Base(cmd[0]) == "kill":
		sig, target = "15", cmd[1]
	default:
		return 0, false
	}
	n, err := strconv.Atoi(sig)
	if err != nil || n <= 0 || n > 64 || target != "1" {
		return 0, false
	}
	return syscall.Signal(n), true
}
