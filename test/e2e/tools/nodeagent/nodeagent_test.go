package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for in, want := range map[string]string{
		"$(A)-$(B)":   "1-two",
		"$(MISSING)":  "$(MISSING)",
		"$$(A)":       "$(A)",
		"cost $5":     "cost $5",
		"open $(A":    "open $(A",
		"trailing $":  "trailing $",
		"":            "",
		"$(A)$(A)$$$": "11$$",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFieldValue(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1",
			Labels:      map[string]string{"batch.kubernetes.io/job-completion-index": "3"},
			Annotations: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa"},
	}
	for path, want := range map[string]string{
		"metadata.name": "p", "metadata.namespace": "ns", "metadata.uid": "u1",
		"metadata.labels['batch.kubernetes.io/job-completion-index']": "3",
		"metadata.annotations['a']":                                   "b",
		"metadata.labels['absent']":                                   "",
		"spec.nodeName":                                               "n1",
		"spec.serviceAccountName":                                     "sa",
		"status.podIP":                                                "127.1.0.9",
		"status.hostIP":                                               "127.0.0.1",
	} {
		got, err := fieldValue(pod, "127.1.0.9", path)
		if err != nil || got != want {
			t.Errorf("fieldValue(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fieldValue(pod, "127.1.0.9", "spec.bogus"); err == nil {
		t.Error("fieldValue(spec.bogus): want an error")
	}
}

func TestRenderHosts(t *testing.T) {
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0-1-fghij", Namespace: "ns", UID: "w1"},
			Spec: corev1.PodSpec{Hostname: "js-workers-0-1", Subdomain: "js"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0-0-abcde", Namespace: "ns", UID: "w0"},
			Spec: corev1.PodSpec{Hostname: "js-workers-0-0", Subdomain: "js"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", UID: "p"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "a-ns", UID: "p2"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "ns", UID: "h"}, Spec: corev1.PodSpec{HostNetwork: true}},
	}
	h := &hostsFile{addrs: newPodAddrs()}
	// Addresses in the order pods are first seen.
	for i, p := range pods {
		want := fmt.Sprintf("127.1.0.%d", i+1)
		if p.Spec.HostNetwork {
			want = "127.0.0.1"
		}
		if got := h.podIP(p); got != want {
			t.Errorf("pod %s/%s: address %s, want %s", p.Namespace, p.Name, got, want)
		}
	}
	got := renderHosts(pods, h.podIP)
	for _, want := range []string{
		"127.0.0.1\tlocalhost\n",
		"127.1.0.1\tjs-workers-0-1.js\n",
		"127.1.0.2\tjs-workers-0-0.js\n",
		"127.1.0.2\tjs-workers-0-0.js.ns.svc.cluster.local\n",
		"127.1.0.2\tjs-workers-0-0\n",
		"127.1.0.2\tjs-workers-0-0-abcde\n",
		"127.1.0.4\tplain\n", // of the two pods "plain", a-ns's
		"127.0.0.1\thost\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "plain.") {
		t.Errorf("a pod without subdomain got a DNS name:\n%s", got)
	}
}

func TestSeekTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "c\n", 2: "b\nc\n", 3: "a\nb\nc\n", 10: "a\nb\nc\n"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := seekTail(f, n); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 64)
		k, _ := f.Read(b)
		f.Close()
		if string(b[:k]) != want {
			t.Errorf("tail %d = %q, want %q", n, b[:k], want)
		}
	}
}

func TestRemoveEmptyTreeKeepsData(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty", "a", "b")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if !removeEmptyTree(filepath.Join(root, "empty")) {
		t.Error("an empty tree was not removed")
	}
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removeEmptyTree(full) {
		t.Error("a folder with data was removed")
	}
	if _, err := os.Stat(filepath.Join(full, "data")); err != nil {
		t.Errorf("data lost: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	c := &corev1.Container{Name: "c", Command: []string{"echo"}, Args: []string{"$(X)", "$$(X)"}}
	got, err := commandLine(c, []string{"X=1"})
	if err != nil || strings.Join(got, " ") != "echo 1 $(X)" {
		t.Errorf("commandLine = %q, %v", got, err)
	}
	if _, err := commandLine(&corev1.Container{Name: "c"}, nil); err == nil {
		t.Error("a container without command: want an error")
	}
}

func TestResolveHostPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got, want := resolveHostPath(filepath.Join(link, "x", "y")), filepath.Join(real, "x", "y"); got != want {
		t.Errorf("resolveHostPath = %q, want %q", got, want)
	}
}

// The log handler must honour tail on a finished container.
func TestContainerLogsTail(t *testing.T) {
	dir := t.TempDir()
	rt := &runtime{pods: map[string]*podRun{}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	p := newPodRun("ns/p", "n", pod, dir)
	p.main[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
	rt.pods["ns/p"] = p
	if err := os.MkdirAll(filepath.Join(dir, "logs", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs", "c", "0.log"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := rt.containerLogs(t.Context(), "ns", "p", "c", api.ContainerLogOpts{Tail: 1, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b := make([]byte, 64)
	n, _ := rc.Read(b)
	if string(b[:n]) != "two\n" {
		t.Errorf("logs = %q, want %q", b[:n], "two\n")
	}
	if _, err := rt.containerLogs(t.Context(), "ns", "p", "nope", api.ContainerLogOpts{}); err == nil {
		t.Error("logs of an unknown container: want an error")
	}
}

func TestImageLookup(t *testing.T) {
	cat := imageCatalogue{
		"pipectl:e2e":                   {WorkingDir: "/exact"},
		"example":                       {WorkingDir: "/any-tag"},
		"registry.local:5000/team/tool": {WorkingDir: "/registry"},
	}
	for ref, want := range map[string]string{
		"pipectl:e2e":                          "/exact",
		"example:0.1":                          "/any-tag",
		"example":                              "/any-tag",
		"example@sha256:abcd":                  "/any-tag",
		"registry.local:5000/team/tool:v2":     "/registry",
		"registry.local:5000/team/tool":        "/registry",
		"pipectl:other":                        "",
		"registry.local:5000/team/other:v2":    "",
		"registry.example/library/example:0.1": "",
		"":                                     "",
	} {
		img, ok := cat.lookup(ref)
		if img.WorkingDir != want || ok != (want != "") {
			t.Errorf("lookup(%q) = %q, %v; want %q", ref, img.WorkingDir, ok, want)
		}
	}
}

func TestLoadImages(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		path := filepath.Join(dir, "images.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cat, err := loadImages(write(`{"tool:1": {"binds": [{"host": "` + dir + `", "path": "/app", "readOnly": true}],
		"workingDir": "/app", "env": ["A=1"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if img := cat["tool:1"]; len(img.Binds) != 1 || !img.Binds[0].ReadOnly || img.WorkingDir != "/app" || img.Env[0] != "A=1" {
		t.Errorf("loaded %+v", img)
	}
	if cat, err := loadImages(""); err != nil || len(cat) != 0 {
		t.Errorf(`loadImages("") = %v, %v`, cat, err)
	}
	_, err = loadImages(write(`{"bad": {"binds": [{"host": "/nonexistent/x", "path": "rel"}], "workingDir": "rel", "env": ["NOEQUALS"]}}`))
	for _, want := range []string{"/nonexistent/x", `"rel" is not absolute`, "workingDir", "NOEQUALS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loadImages(bad) = %v; want it to mention %q", err, want)
		}
	}
	if _, err := loadImages(write(`{"x": {"bindz": []}}`)); err == nil {
		t.Error("an unknown field: want an error")
	}
}

func TestImageEnvAndSandbox(t *testing.T) {
	host := t.TempDir()
	script := filepath.Join(host, "run.sh")
	if err := os.WriteFile(script, []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A mount point that does not exist on the host, below the test's temp dir.
	target := filepath.Join(t.TempDir(), "img")
	r := &runtime{
		runtimeConfig: runtimeConfig{bwrap: "bwrap", apiHost: "127.0.0.1", apiPort: "6443", hosts: &hostsFile{path: "/hosts"},
			images: imageCatalogue{"tool": {
				Binds:      []imageBind{{Host: host, Path: target, ReadOnly: true}},
				WorkingDir: target,
				Env:        []string{"PATH=/img/bin:/usr/bin", "MODE=image", "KEEP=image"},
			}}},
		mounts: newMountPoints(),
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "tool:1.0",
			Env: []corev1.EnvVar{{Name: "MODE", Value: "container"}, {Name: "X", Value: "$(KEEP)"}}}}}}
	env, err := r.containerEnv(t.Context(), pod, &pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, want := range map[string]string{"PATH": "/img/bin:/usr/bin", "MODE": "container", "KEEP": "image", "X": "image"} {
		if got[k] != want {
			t.Errorf("env %s = %q, want %q (env %q)", k, got[k], want, env)
		}
	}

	p := newPodRun("ns/p", "n", pod, t.TempDir())
	args, err := r.sandboxArgs(p, &pod.Spec.Containers[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{"--ro-bind " + host + " " + target, "--chdir " + target + " --"} {
		if !strings.Contains(line, want) {
			t.Errorf("sandbox args lack %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "workdirs") {
		t.Errorf("a working directory inside an image bind got a per-pod folder:\n%s", line)
	}
	// The container's own working directory wins; unknown images get no binds.
	other := corev1.Container{Name: "o", Image: "unknown:1", WorkingDir: "/tmp"}
	args, err = r.sandboxArgs(p, &other, nil)
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.Join(args, " "); strings.Contains(line, host) || !strings.Contains(line, "--chdir /tmp --") {
		t.Errorf("unknown image: %s", line)
	}
	// A volume over the per-pod working directory (state dir in /tmp, emptyDir at /tmp):
	// the container starts in / instead of a folder it cannot see.
	tmp := corev1.Container{Name: "t", Image: "unknown:1", VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: filepath.Dir(p.dir)}}}
	args, err = r.sandboxArgs(p, &tmp, map[string]volume{"tmp": {hostPath: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.Join(args, " "); !strings.Contains(line, "--chdir / --") {
		t.Errorf("working directory under a volume: %s", line)
	}
	r.mounts.release(p.key)
}

func TestGroupMembers(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL); _ = cmd.Wait() }()
	var members []int
	for deadline := time.Now().Add(5 * time.Second); len(members) < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		members = groupMembers(pid)
	}
	if len(members) != 3 {
		t.Fatalf("group %d has members %v, want sh and two sleeps", pid, members)
	}
	// The leader is spared: it keeps running while the others get the signal.
	signalGroup(pid, syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the group leader got the signal: %v", err)
	}
}

// TestStopGroupAsItStarts: a container stopped while its leader still sets
// up (no program in its group yet) gets SIGTERM once its program is there,
// and stops long before its grace period ends (it used to run until SIGKILL).
func TestStopGroupAsItStarts(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The leader waits 0.3 s with no child (read is a builtin), then runs
	// the program, which stops on SIGTERM.
	cmd := exec.Command("bash", "-c", `read -t 0.3 <> "$0"; sh -c 'trap "exit 0" TERM; sleep 60 & wait'`, fifo)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	began := time.Now()
	stopGroup(pid, exited, 20*time.Second)
	<-exited
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the container stopped %s after the stop, want its program to get SIGTERM once it started", took)
	}
}

func TestKillCommand(t *testing.T) {
	for _, c := range []struct {
		cmd []string
		sig syscall.Signal
		ok  bool
	}{
		{[]string{"/var/run/argo/argoexec", "kill", "15", "1"}, syscall.SIGTERM, true},
		{[]string{"argoexec", "kill", "9", "1"}, syscall.SIGKILL, true},
		{[]string{"kill", "-2", "1"}, syscall.SIGINT, true},
		{[]string{"/bin/kill", "1"}, syscall.SIGTERM, true},
		{[]string{"argoexec", "kill", "15", "7"}, 0, false},
		{[]string{"kill", "-TERM", "1"}, 0, false},
		{[]string{"sh", "-c", "kill 1"}, 0, false},
		{nil, 0, false},
	} {
		sig, ok := killCommand(c.cmd)
		if sig != c.sig || ok != c.ok {
			t.Errorf("killCommand(%q) = %v, %v; want %v, %v", c.cmd, sig, ok, c.sig, c.ok)
		}
	}
}

// Each pod keeps its address for its life; a new pod takes the next free one, a freed one
// only after the block went round; retain frees the pods gone, not those just given.
func TestPodAddrs(t *testing.T) {
	a := newPodAddrs()
	pod := func(uid string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	p1, p2 := pod("1"), pod("2")
	if got := []string{a.of(p1), a.of(p2), a.of(p1)}; strings.Join(got, " ") != "127.1.0.1 127.1.0.2 127.1.0.1" {
		t.Errorf("addresses %v: want 127.1.0.1 127.1.0.2 127.1.0.1", got)
	}
	a.retain([]*corev1.Pod{p2}, time.Now().Add(-time.Minute))
	if len(a.byID) != 2 {
		t.Errorf("retain freed an address given under a minute ago: %v", a.byID)
	}
	a.retain([]*corev1.Pod{p2}, time.Now().Add(time.Second))
	if _, kept := a.byID["1"]; kept || len(a.used) != 1 {
		t.Errorf("retain kept the address of a pod gone: %v %v", a.byID, a.used)
	}
	if got := a.of(pod("3")); got != "127.1.0.3" {
		t.Errorf("a new pod got %s, want 127.1.0.3 (not the one just freed)", got)
	}
	// Round the block: the offsets skip x.x.255.255 and x.x.0.0, then reuse 127.1.0.1.
	a.next = podNetSize() - 2
	if got := []string{a.of(pod("4")), a.of(pod("5"))}; strings.Join(got, " ") != "127.1.255.254 127.1.0.1" {
		t.Errorf("after the block's end %v: want 127.1.255.254 127.1.0.1", got)
	}
}

// The pods' addresses route on this machine with nothing configured: a server on one
// pod's address is reached there, and not on another's.
func TestPodAddressesRoute(t *testing.T) {
	a := newPodAddrs()
	ip1 := a.of(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1"}})
	ip2 := a.of(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "2"}})
	ln, err := net.Listen("tcp", net.JoinHostPort(ip1, "0"))
	if err != nil {
		t.Fatalf("listen on pod address %s: %v", ip1, err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	c, err := net.DialTimeout("tcp", net.JoinHostPort(ip1, port), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s:%s: %v", ip1, port, err)
	}
	c.Close()
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip2, port), 5*time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s:%s reached the server on %s", ip2, port, ip1)
	}
}
