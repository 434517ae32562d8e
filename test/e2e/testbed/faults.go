package testbed

import (
	"context"
	"fmt"
	"syscall"
	"time"
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
