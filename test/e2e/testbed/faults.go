package testbed

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Faults for the drills: parts of a running test bed killed and started again, as
// crashes and outages do. A killed component keeps its data, port and arguments.

// KillMinIO kills MinIO at once (SIGKILL), as a crash would. StartMinIO brings it back.
func (c *Cluster) KillMinIO() error { return c.kill("minio") }

// StartMinIO starts a killed MinIO again (same port, data and credentials) and waits
// until it answers its readiness check.
func (c *Cluster) StartMinIO(ctx context.Context) error {
	comp, err := c.restart("minio")
	if err != nil {
		return err
	}
	return poll(ctx, "minio after its restart", 100*time.Millisecond, []*component{comp},
		httpReady("http://"+c.MinIOEndpoint+"/minio/health/ready"))
}

// RestartAPIServer kills kube-apiserver (SIGKILL), starts it again after down, and waits
// until the whole test bed is ready again (every check Start waits for: controllers
// back, nodes Ready, webhooks answering).
func (c *Cluster) RestartAPIServer(ctx context.Context, down time.Duration) error {
	if err := c.kill("kube-apiserver"); err != nil {
		return err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	if _, err := c.restart("kube-apiserver"); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// Node is a node registered by a node agent of its own (StartNode), which can be lost
// without the test bed's two nodes.
type Node struct {
	Name  string
	c     *Cluster
	agent *component
}

// StartNode starts another node agent registering one plain node, name (no GPU node),
// with the test bed's image catalogue, and waits until the node is Ready. The test bed
// stops it with the rest; Remove also deletes the Node.
func (c *Cluster) StartNode(ctx context.Context, name string) (*Node, error) {
	base := c.find("nodeagent")
	if base == nil {
		return nil, fmt.Errorf("the test bed has no node agent")
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	c.ports = append(c.ports, ports...)
	var args []string
	for _, a := range base.args {
		switch flag, _, _ := strings.Cut(a, "="); flag {
		case "--listen":
			a = fmt.Sprintf("--listen=127.0.0.1:%d", ports[0])
		case "--state-dir":
			a = "--state-dir=" + filepath.Join(c.Dir, "nodeagent-"+name)
		case "--node":
			a = "--node=" + name
		case "--gpu-node":
			a = "--gpu-node="
		case "--gpus":
			continue
		}
		args = append(args, a)
	}
	agent, err := startComponent(c.Logs, "nodeagent-"+name, base.cmd.Path, args, base.env)
	if err != nil {
		return nil, err
	}
	c.components = append(c.components, agent)
	n := &Node{Name: name, c: c, agent: agent}
	if err := poll(ctx, "node "+name+" Ready", 250*time.Millisecond, []*component{agent}, c.nodesReady(name)); err != nil {
		return nil, err
	}
	return n, nil
}

// Kill kills the node's agent at once (SIGKILL): the processes of its pods die with it,
// as they do when a machine is lost, and nothing reports on the node any more.
// The agent then leaves the test bed's components: a lost node is no
// component whose death fails the later tests' start-up checks.
func (n *Node) Kill() {
	n.agent.kill()
	n.c.components = slices.DeleteFunc(n.c.components, func(c *component) bool { return c == n.agent })
}

// Remove kills the node's agent if it runs and deletes the Node (if still there), so
// that no later pod is scheduled onto a node nobody serves.
func (n *Node) Remove(ctx context.Context) error {
	n.Kill()
	err := n.c.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// find returns the running or stopped component name, or nil.
func (c *Cluster) find(name string) *component {
	for _, comp := range c.components {
		if comp.name == name {
			return comp
		}
	}
	return nil
}

// kill kills component name at once (SIGKILL to its process group).
func (c *Cluster) kill(name string) error {
	comp := c.find(name)
	if comp == nil {
		return fmt.Errorf("the test bed has no %s", name)
	}
	comp.kill()
	return nil
}

// restart starts the ended component name again, with the same binary, arguments and
// environment, in its place among the components.
func (c *Cluster) restart(name string) (*component, error) {
	for i, old := range c.components {
		if old.name != name {
			continue
		}
		if !old.exited() {
			return nil, fmt.Errorf("%s still runs", name)
		}
		comp, err := startComponent(c.Logs, name, old.cmd.Path, old.args, old.env)
		if err != nil {
			return nil, err
		}
		c.components[i] = comp
		return comp, nil
	}
	return nil, fmt.Errorf("the test bed has no %s", name)
}

// kill sends SIGKILL to the component's process group and waits for its leader.
func (c *component) kill() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}
