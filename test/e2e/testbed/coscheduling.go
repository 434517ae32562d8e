package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// CoschedulingSchedulerName is the schedulerName of the coscheduling scheduler: the
// name pipectl's launcher gives the pods of a coscheduling gang.
const CoschedulingSchedulerName = "scheduler-plugins-scheduler"

// StartCoscheduling starts, once, a second scheduler process (the kube tool's
// kube-scheduler, which registers scheduler-plugins' Coscheduling plugin, from the
// modules tools/kube pins) with that plugin as the profile CoschedulingSchedulerName,
// and installs the PodGroup CRD. Pods that name that scheduler and a PodGroup are
// bound all together or not at all.
func (c *Cluster) StartCoscheduling(ctx context.Context) error {
	c.cosched.once.Do(func() { c.cosched.err = c.startCoscheduling(ctx) })
	return c.cosched.err
}

func (c *Cluster) startCoscheduling(ctx context.Context) error {
	began := time.Now()
	t, err := c.prepareTool(ctx, ToolKube, "sigs.k8s.io/scheduler-plugins", 1)
	if err != nil {
		return err
	}
	dir, ports := t.moduleDir, t.ports
	c.say("installing the PodGroup CRD")
	if err := applyCRDFiles(ctx, c.Config, []string{filepath.Join(dir, "config", "crd", "bases", "scheduling.x-k8s.io_podgroups.yaml")}, c.components, nil); err != nil {
		return err
	}
	config := filepath.Join(c.Dir, "coscheduling-config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: %s
profiles:
- schedulerName: %s
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
`, c.Kubeconfig, CoschedulingSchedulerName)), 0o644); err != nil {
		return err
	}
	c.say("starting the coscheduling scheduler")
	sched, err := startComponent(c.Logs, "coscheduling", t.bin, []string{"kube-scheduler",
		"--config=" + config,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[0]),
		"--v=2",
	}, cleanEnv())
	if err != nil {
		return err
	}
	c.components = append(c.components, sched)
	if err := poll(ctx, "coscheduling scheduler", 250*time.Millisecond, c.components, httpReady(fmt.Sprintf("https://127.0.0.1:%d/healthz", ports[0]))); err != nil {
		return err
	}
	c.say("coscheduling scheduler ready in %s", time.Since(began).Round(time.Second))
	return nil
}
