package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podRun is one pod on this agent: its spec as bound, its folder and the state of its
// containers, from which the pod status is derived.
type podRun struct {
	key  string
	node string
	pod  *corev1.Pod
	dir  string
	ip   string // the pod's address (podAddrs); empty: the node's

	ctx    context.Context // cancelled when the pod is stopped
	cancel context.CancelFunc
	done   chan struct{} // closed when no process of the pod is left

	mu       sync.Mutex
	grace    time.Duration
	deleted  bool
	phase    corev1.PodPhase
	reason   string
	message  string
	started  metav1.Time
	initDone bool
	init     []corev1.ContainerStatus
	main     []corev1.ContainerStatus
}

func newPodRun(key, node string, pod *corev1.Pod, dir string) *podRun {
	ctx, cancel := context.WithCancel(context.Background())
	p := &podRun{
		key: key, node: node, pod: pod, dir: dir,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		phase:   corev1.PodPending,
		started: metav1.Now(),
		grace:   30 * time.Second,
	}
	waiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		waiting = "PodInitializing"
	}
	for _, c := range pod.Spec.InitContainers {
		p.init = append(p.init, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}})
	}
	for _, c := range pod.Spec.Containers {
		p.main = append(p.main, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}})
	}
	return p
}

// markDeleted records the deletion; it reports false when the pod was already deleted.
func (p *podRun) markDeleted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.deleted {
		return false
	}
	p.deleted = true
	return true
}

// stop cancels the pod: running processes get SIGTERM, then SIGKILL after grace.
func (p *podRun) stop(grace time.Duration) {
	p.mu.Lock()
	p.grace = grace
	p.mu.Unlock()
	p.cancel()
}

func (p *podRun) graceNow() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.grace
}

// snapshot is a copy of the pod with its current status.
func (p *podRun) snapshot() *corev1.Pod {
	out := p.pod.DeepCopy()
	out.Status = p.status(p.pod.Status)
	return out
}

// status derives the pod status from the container states. base is the status the API
// server has: its qosClass and the conditions other components own are kept.
func (p *podRun) status(base corev1.PodStatus) corev1.PodStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := metav1.Now()
	ip := cmp.Or(p.ip, nodeIP)
	st := corev1.PodStatus{
		Phase:     p.phase,
		Reason:    p.reason,
		Message:   p.message,
		HostIP:    nodeIP,
		HostIPs:   []corev1.HostIP{{IP: nodeIP}},
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: &p.started,
		QOSClass:  base.QOSClass,
	}
	for _, s := range p.init {
		st.InitContainerStatuses = append(st.InitContainerStatuses, *s.DeepCopy())
	}
	allReady := len(p.main) > 0
	for _, s := range p.main {
		st.ContainerStatuses = append(st.ContainerStatuses, *s.DeepCopy())
		if !s.Ready {
			allReady = false
		}
	}
	terminal := p.phase == corev1.PodSucceeded || p.phase == corev1.PodFailed
	cond := func(t corev1.PodConditionType, ok bool, reason string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: now}
		if ok {
			c.Status, c.Reason = corev1.ConditionTrue, ""
		}
		return c
	}
	notReady := "ContainersNotReady"
	if terminal {
		notReady = "PodCompleted"
	}
	ours := []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, !terminal, ""),
		cond(corev1.PodInitialized, p.initDone, "ContainersNotInitialized"),
		cond(corev1.ContainersReady, allReady && !terminal, notReady),
		cond(corev1.PodReady, allReady && !terminal, notReady),
	}
	mine := map[corev1.PodConditionType]bool{}
	for _, c := range ours {
		mine[c.Type] = true
	}
	for _, c := range base.Conditions {
		if !mine[c.Type] {
			st.Conditions = append(st.Conditions, c)
		}
	}
	for _, c := range ours {
		// Keep the transition time when the status did not change.
		for _, old := range base.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, c)
	}
	return st
}

func (p *podRun) setContainer(init bool, i int, f func(*corev1.ContainerStatus)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if init {
		f(&p.init[i])
	} else {
		f(&p.main[i])
	}
}

func (p *podRun) finish(phase corev1.PodPhase, reason, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.reason, p.message = phase, reason, message
}

// runPod is the pod's life: volumes, init containers one after the other, then the
// containers together, restarted as the restart policy says.
func (r *runtime) runPod(p *podRun) {
	defer close(p.done)
	pod := p.pod
	for _, d := range []string{"logs", "volumes", "work"} {
		if err := os.MkdirAll(filepath.Join(p.dir, d), 0o755); err != nil {
			p.finish(corev1.PodFailed, "NodeAgentError", err.Error())
			r.notify(p)
			return
		}
	}

	var vols map[string]volume
	if !r.retry(p, func() (err error) {
		vols, err = r.prepareVolumes(p.ctx, p)
		return err
	}, "ContainerCreating") {
		r.finishStopped(p)
		return
	}

	policy := pod.Spec.RestartPolicy
	for i := range pod.Spec.InitContainers {
		for {
			code, ok := r.runContainer(p, true, i, vols)
			if !ok {
				r.finishStopped(p)
				return
			}
			if code == 0 {
				break
			}
			if policy == corev1.RestartPolicyNever {
				p.finish(corev1.PodFailed, "", fmt.Sprintf("init container %s exited with code %d", pod.Spec.InitContainers[i].Name, code))
				r.notify(p)
				return
			}
			if !r.backoff(p, true, i) {
				r.finishStopped(p)
				return
			}
		}
	}
	p.mu.Lock()
	p.initDone = true
	p.phase = corev1.PodRunning
	p.mu.Unlock()
	r.notify(p)

	codes := make([]int, len(pod.Spec.Containers))
	var wg sync.WaitGroup
	for i := range pod.Spec.Containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				code, ok := r.runContainer(p, false, i, vols)
				codes[i] = code
				if !ok {
					return
				}
				restart := policy == corev1.RestartPolicyAlways ||
					(policy == corev1.RestartPolicyOnFailure && code != 0)
				if !restart || !r.backoff(p, false, i) {
					return
				}
			}
		}()
	}
	wg.Wait()
	phase := corev1.PodSucceeded
	for _, c := range codes {
		if c != 0 {
			phase = corev1.PodFailed
		}
	}
	p.finish(phase, "", "")
	r.log.Info("pod finished", "pod", p.key, "phase", phase)
	r.notify(p)
}

// finishStopped ends a pod stopped before or between its containers.
func (r *runtime) finishStopped(p *podRun) {
	p.mu.Lock()
	for _, list := range [][]corev1.ContainerStatus{p.init, p.main} {
		for i := range list {
			if list[i].State.Terminated == nil {
				list[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "the pod was stopped before the container ran",
					FinishedAt: metav1.Now(),
				}}
				list[i].Ready = false
			}
		}
	}
	p.phase = corev1.PodFailed
	p.mu.Unlock()
	r.notify(p)
}

// retry calls f until it succeeds or the pod is stopped, showing its error as the waiting
// reason of the containers. It reports false when the pod was stopped.
func (r *runtime) retry(p *podRun, f func() error, reason string) bool {
	delay := 500 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return true
		}
		r.log.Warn("pod setup failed, retrying", "pod", p.key, "err", err)
		p.mu.Lock()
		for _, list := range [][]corev1.ContainerStatus{p.init, p.main} {
			for i := range list {
				if list[i].State.Waiting != nil {
					list[i].State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}
				}
			}
		}
		p.mu.Unlock()
		r.notify(p)
		select {
		case <-p.ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// backoff waits before a restart (CrashLoopBackOff); false when the pod was stopped.
func (r *runtime) backoff(p *podRun, init bool, i int) bool {
	var restarts int32
	p.setContainer(init, i, func(s *corev1.ContainerStatus) {
		restarts = s.RestartCount
		s.LastTerminationState = s.State
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		s.Ready, s.Started = false, ptr(false)
		s.RestartCount++
	})
	r.notify(p)
	delay := min(time.Second<<min(restarts, 5), 30*time.Second)
	select {
	case <-p.ctx.Done():
		return false
	case <-time.After(delay):
		return true
	}
}

func ptr[T any](v T) *T { return &v }
