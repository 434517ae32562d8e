package testbed

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StartT starts a test bed for one test (or fails it) and stops it in t.Cleanup,
// printing every component's log tail when the test failed.
func StartT(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start test bed: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("test bed logs in %s\n%s", c.Logs, c.LogTails(40))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop test bed: %v", err)
		}
	})
	return c
}

// DumpOnFailure prints the components' log tails when t fails; for tests sharing one
// test bed started in TestMain.
func (c *Cluster) DumpOnFailure(t testing.TB) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("test bed logs in %s\n%s", c.Logs, c.LogTails(40))
		}
	})
}

// Namespace creates a fresh namespace for t (deleted at the end of the test) and waits
// until pods can run in it.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	if err := c.WaitNamespaceReady(ctx, ns.Name); err != nil {
		t.Fatalf("namespace %s: %v", ns.Name, err)
	}
	return ns.Name
}

// Banner is what `testbed up` prints: how to point kubectl and pipectl at the test bed.
func (c *Cluster) Banner() string {
	s := fmt.Sprintf("Test bed running (folder %s, logs %s).\n\nPoint kubectl and pipectl at it:\n\n", c.Dir, c.Logs)
	for _, kv := range c.Env() {
		s += "  export " + kv + "\n"
	}
	if c.Kubectl != "" {
		s += fmt.Sprintf("  alias kubectl=%s\n", c.Kubectl)
	}
	s += "\nNodes: " + NodeName + " (plain), " + GPUNodeName + " (nvidia.com/gpu, tainted nvidia.com/gpu=present:NoSchedule)\n"
	s += "MinIO: http://" + c.MinIOEndpoint + " (user " + MinIOAccessKey + ")\n"
	return s
}
