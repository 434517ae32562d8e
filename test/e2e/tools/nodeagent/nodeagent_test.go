package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"status.podIP":                                                "127.0.0.1",
	} {
		got, err := fieldValue(pod, path)
		if err != nil || got != want {
			t.Errorf("fieldValue(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fieldValue(pod, "spec.bogus"); err == nil {
		t.Error("fieldValue(spec.bogus): want an error")
	}
}

func TestRenderHosts(t *testing.T) {
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "js-workers-0-0-abcde", Namespace: "ns"},
			Spec: corev1.PodSpec{Hostname: "js-workers-0-0", Subdomain: "js"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns"}},
	}
	got := renderHosts(pods)
	for _, want := range []string{
		"127.0.0.1\tlocalhost\n",
		"127.0.0.1\tjs-workers-0-0.js\n",
		"127.0.0.1\tjs-workers-0-0.js.ns.svc.cluster.local\n",
		"127.0.0.1\tjs-workers-0-0\n",
		"127.0.0.1\tplain\n",
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
