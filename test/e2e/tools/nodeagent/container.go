package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podHostname is the pod's hostname as the kubelet sets it.
func podHostname(pod *corev1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// runContainer runs one attempt of container i (of the init containers or the containers)
// and returns its exit code; ok is false when the pod was stopped.
func (r *runtime) runContainer(p *podRun, init bool, i int, vols map[string]volume) (code int, ok bool) {
	pod := p.pod
	c := &pod.Spec.Containers[i]
	if init {
		c = &pod.Spec.InitContainers[i]
	}

	if !r.pullImage(p, c) {
		return 137, false
	}
	var env []string
	if !r.retry(p, func() (err error) {
		env, err = r.containerEnv(p.ctx, pod, c)
		return err
	}, "CreateContainerConfigError") {
		return 137, false
	}
	argv, err := commandLine(c, env)
	if err == nil {
		var bargs []string
		bargs, err = r.sandboxArgs(p, c, vols)
		argv = append(bargs, argv...)
	}
	var restarts int32
	p.setContainer(init, i, func(s *corev1.ContainerStatus) { restarts = s.RestartCount })
	logPath := filepath.Join(p.dir, "logs", c.Name, strconv.Itoa(int(restarts))+".log")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(logPath), 0o755)
	}
	var logf *os.File
	if err == nil {
		logf, err = os.Create(logPath)
	}
	var cmd *exec.Cmd
	if err == nil {
		defer logf.Close()
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if len(argv) > 1 && argv[0] == r.self && argv[1] == overlayExecCmd {
			// The overlay of a pulled image is mounted in a mount namespace of the
			// container's own (mounts made private by Go): it goes when the container does.
			cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
		}
		err = cmd.Start()
	}
	if err != nil {
		r.log.Warn("container did not start", "pod", p.key, "container", c.Name, "err", err)
		now := metav1.Now()
		p.setContainer(init, i, func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 128, Reason: "StartError", Message: err.Error(), StartedAt: now, FinishedAt: now,
			}}
			s.Ready, s.Started = false, ptr(false)
		})
		r.notify(p)
		return 128, p.ctx.Err() == nil
	}

	pid := cmd.Process.Pid
	started := metav1.Now()
	p.setContainer(init, i, func(s *corev1.ContainerStatus) {
		s.ContainerID = fmt.Sprintf("proc://%d", pid)
		s.ImageID = "proc://" + c.Image
		if pi, ok := r.puller.cached(c.Image); ok {
			s.ImageID = untagged(c.Image) + "@" + pi.digest
		}
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
		s.Ready, s.Started = !init, ptr(true)
	})
	r.log.Info("container started", "pod", p.key, "container", c.Name, "pid", pid, "argv", argv)
	r.notify(p)

	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
		case <-p.ctx.Done():
			stopGroup(pid, exited, p.graceNow())
		}
	}()
	werr := cmd.Wait()
	close(exited)
	// Anything the container left in its process group goes with it.
	_ = syscall.Kill(-pid, syscall.SIGKILL)

	code = exitCode(cmd, werr)
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	msg := ""
	if code != 0 {
		msg = lastLine(logPath)
	}
	p.setContainer(init, i, func(s *corev1.ContainerStatus) {
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: reason, Message: msg, StartedAt: started, FinishedAt: metav1.Now(),
			ContainerID: s.ContainerID,
		}}
		s.Ready = false
	})
	r.log.Info("container exited", "pod", p.key, "container", c.Name, "code", code)
	r.notify(p)
	return code, p.ctx.Err() == nil
}

// signalGroup sends sig to every process of process group pgid but its leader (the
// bubblewrap process outside the container). The container's init, PID 1 of its PID
// namespace, ignores signals it has no handler for, as on a real node.
func signalGroup(pgid int, sig syscall.Signal) int {
	n := 0
	for _, pid := range groupMembers(pgid) {
		if pid != pgid {
			_ = syscall.Kill(pid, sig)
			n++
		}
	}
	return n
}

// stopGroup stops the container whose process group is pgid: SIGTERM to
// its processes, then SIGKILL to the group once grace has passed, unless
// exited is closed first. Not to the group's leader (bubblewrap, or the
// node agent's overlay-exec before it): it would die at once, and
// --die-with-parent kills the container's processes with SIGKILL, no
// graceful stop. A container stopped as it starts has no program yet (the
// leader is still setting up): it gets SIGTERM as soon as its program is
// there, which a pod deleted just after it started would otherwise never
// send (the program then ran until SIGKILL).
//
// Until a second has passed since the stop and since the last SIGTERM,
// every process that joins the group gets SIGTERM too, once, and once more
// after it exec'd another program: the container's init (bubblewrap inside
// the namespace, which ignores it) may be all there is when the pod is
// deleted, its program started just after; and a shell's child signalled
// between its fork and its exec can lose the signal (the shell resets its
// traps there), the program it then runs never hearing of the stop.
func stopGroup(pgid int, exited <-chan struct{}, grace time.Duration) {
	deadline := time.After(grace)
	signalled := map[int]string{} // pid: its program when signalled
	lateUntil := time.Now().Add(time.Second)
	for {
		for _, pid := range groupMembers(pgid) {
			if prog, ok := signalled[pid]; pid == pgid || (ok && prog == program(pid)) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGTERM)
			signalled[pid] = program(pid)
			lateUntil = time.Now().Add(time.Second)
		}
		next := time.After(20 * time.Millisecond)
		if len(signalled) > 0 && time.Now().After(lateUntil) {
			next = nil // only exited or the deadline now
		}
		select {
		case <-exited:
			return
		case <-deadline:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		case <-next:
		}
	}
}

// groupMembers lists the processes of process group pgid from /proc.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// program is what process pid runs (its /proc exe link), "" when gone.
func program(pid int) string {
	exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return exe
}

func exitCode(cmd *exec.Cmd, err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// lastLine is the last line of a container's log, for the terminated state's message.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	l := lines[len(lines)-1]
	if len(l) > 1024 {
		l = l[:1024]
	}
	return l
}

// commandLine is the container's argv: command and args with $(VAR) expanded. The image's
// entrypoint is unknown here, so a container must name its command.
func commandLine(c *corev1.Container, env []string) ([]string, error) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	var argv []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expand(a, lookup))
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("container %s has neither command nor args (images are not run here: name the command)", c.Name)
	}
	return argv, nil
}

// sandboxArgs is the bubblewrap command line that gives the container the pod's view of
// the file system: host root, its own /proc, /dev and /run, the pod's hosts file, volume
// mounts at their paths (after the image's binds from the catalogue), a working directory
// (the container's, else the image's), its own PID and UTS namespaces (hostname).
func (r *runtime) sandboxArgs(p *podRun, c *corev1.Container, vols map[string]volume) ([]string, error) {
	img, rootfs := r.imageFor(c.Image)
	if rootfs != "" {
		return r.rootfsArgs(p, c, vols, img, rootfs)
	}
	args := []string{r.bwrap, "--die-with-parent",
		"--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run",
		"--ro-bind", r.hosts.path, "/etc/hosts",
		"--unshare-pid", "--unshare-uts", "--hostname", podHostname(p.pod),
	}
	var mountPaths, binds []string
	for _, b := range img.Binds {
		dst := resolveHostPath(b.Path)
		if err := r.mounts.acquire(p.key, dst); err != nil {
			return nil, err
		}
		flag := "--bind"
		if b.ReadOnly {
			flag = "--ro-bind"
		}
		binds = append(binds, flag, b.Host, dst)
		mountPaths = append(mountPaths, dst)
	}
	for _, m := range c.VolumeMounts {
		src, flag, err := mountSource(c, m, vols)
		if err != nil {
			return nil, err
		}
		dst := resolveHostPath(m.MountPath)
		if err := r.mounts.acquire(p.key, dst); err != nil {
			return nil, err
		}
		binds = append(binds, flag, src, dst)
		mountPaths = append(mountPaths, dst)
	}
	wd := filepath.Join(p.dir, "work")
	workingDir := c.WorkingDir
	if workingDir == "" {
		workingDir = img.WorkingDir
	}
	if workingDir == "" {
		// The per-pod folder is under the state dir (often in /tmp): a volume mounted
		// over it (Argo's executor mounts one at /tmp) hides it; then "/", as Docker's default.
		for _, m := range mountPaths {
			if wd == m || strings.HasPrefix(wd, m+"/") {
				wd = "/"
			}
		}
	}
	if workingDir != "" {
		wd = resolveHostPath(workingDir)
		inMount := false
		for _, m := range mountPaths {
			if wd == m || strings.HasPrefix(wd, m+"/") {
				inMount = true
			}
		}
		if _, err := os.Stat(wd); !inMount && os.IsNotExist(err) {
			// The image would have made it: give the container a fresh per-pod folder there,
			// bound first so that binds and mounts inside it stay visible.
			host := filepath.Join(p.dir, "workdirs", c.Name)
			if err := os.MkdirAll(host, 0o755); err != nil {
				return nil, err
			}
			if err := r.mounts.acquire(p.key, wd); err != nil {
				return nil, err
			}
			args = append(args, "--bind", host, wd)
		}
	}
	args = append(append(args, binds...), "--chdir", wd, "--")
	return args, nil
}

// rootfsArgs is the command line of a container of a pulled image: the agent's
// overlay-exec helper (overlay.go), which mounts an overlay of the image's unpacked root
// file system (read-only) and a fresh folder of the container's (its writes and the mount
// points bubblewrap makes go there, never to the cached image) in a mount namespace of
// its own, then becomes bubblewrap with that overlay as /, its own /proc, /dev and /run,
// the host's /sys read-only, the pod's hosts file, the host binds the image declares, the
// volume mounts, the working directory (the container's, else the image's, else /; made
// when missing), its own PID and UTS namespaces. Paths are the container's: nothing is
// created on the host outside the pod's folder.
func (r *runtime) rootfsArgs(p *podRun, c *corev1.Container, vols map[string]volume, img image, rootfs string) ([]string, error) {
	layer := filepath.Join(p.dir, "rootfs", c.Name)
	if err := os.RemoveAll(layer); err != nil { // an earlier attempt's writes
		return nil, err
	}
	upper, work, merged := filepath.Join(layer, "upper"), filepath.Join(layer, "work"), filepath.Join(layer, "merged")
	for _, d := range []string{upper, work, merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	args := []string{r.self, overlayExecCmd, rootfs, upper, work, merged, "--",
		r.bwrap, "--die-with-parent",
		"--bind", merged, "/",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run", "--ro-bind", "/sys", "/sys",
		"--ro-bind", r.hosts.path, "/etc/hosts",
		"--unshare-pid", "--unshare-uts", "--hostname", podHostname(p.pod),
	}
	for _, b := range img.Binds {
		flag := "--bind"
		if b.ReadOnly {
			flag = "--ro-bind"
		}
		args = append(args, flag, b.Host, filepath.Clean(b.Path))
	}
	for _, m := range c.VolumeMounts {
		src, flag, err := mountSource(c, m, vols)
		if err != nil {
			return nil, err
		}
		args = append(args, flag, src, filepath.Clean(m.MountPath))
	}
	wd := cmp.Or(c.WorkingDir, img.WorkingDir, "/")
	if !filepath.IsAbs(wd) {
		return nil, fmt.Errorf("container %s: workingDir %q is not absolute", c.Name, wd)
	}
	return append(args, "--dir", filepath.Clean(wd), "--chdir", filepath.Clean(wd), "--"), nil
}

// mountSource is the host folder container c mounts for m, one of the pod's
// volumes vols (its subPath made when missing), and the bubblewrap flag
// that binds it (--ro-bind for a read-only mount or volume). m's mountPath
// must be absolute.
func mountSource(c *corev1.Container, m corev1.VolumeMount, vols map[string]volume) (src, flag string, err error) {
	v, ok := vols[m.Name]
	if !ok {
		return "", "", fmt.Errorf("container %s mounts volume %q, which the pod does not declare", c.Name, m.Name)
	}
	src = v.hostPath
	if m.SubPath != "" {
		src = filepath.Join(src, m.SubPath)
		if _, err := os.Stat(src); os.IsNotExist(err) {
			if err := os.MkdirAll(src, 0o755); err != nil {
				return "", "", err
			}
		}
	}
	if !filepath.IsAbs(m.MountPath) {
		return "", "", fmt.Errorf("container %s: mountPath %q is not absolute", c.Name, m.MountPath)
	}
	flag = "--bind"
	if m.ReadOnly || v.readOnly {
		flag = "--ro-bind"
	}
	return src, flag, nil
}

// resolveHostPath resolves the symbolic links in the part of path that exists on the host
// (/var/run → /run), so bubblewrap makes mount points where the container will look.
func resolveHostPath(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for cur := path; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		if cur == "/" {
			return path
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}
