package launcher

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/launcher/jobset"
)

// progress is the line of counts shown when it changes (s.mu held).
func (s *session) progress() string {
	var attempt int32
	if s.js != nil {
		attempt = s.js.Status.Restarts
	}
	pending, running, done, failed := 0, 0, 0, 0
	waiting, waitingNode := "", -1
	for _, rp := range s.pods {
		if rp.attempt != attempt {
			continue
		}
		if why := unschedulable(rp.pod); why != "" && (waitingNode < 0 || rp.node < waitingNode) {
			waiting, waitingNode = why, rp.node
		}
		switch rp.pod.Status.Phase {
		case corev1.PodRunning:
			running++
		case corev1.PodSucceeded:
			done++
		case corev1.PodFailed:
			failed++
		default:
			pending++
		}
	}
	pending += max(s.nodes-pending-running-done-failed, 0)
	line := fmt.Sprintf("ranks: %d pending, %d running, %d done", pending, running, done)
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if attempt > 0 {
		line += fmt.Sprintf(" (restart %d)", attempt)
	}
	if waiting != "" {
		line += fmt.Sprintf(" (%s pending: %s)", s.who(waitingNode), waiting)
	}
	if suspended(s.js) {
		if q := s.js.Labels[jobset.LabelKueueQueue]; q != "" {
			line += fmt.Sprintf(" (JobSet suspended: waiting for admission by Kueue queue %s)", q)
		} else {
			line += " (JobSet suspended: waiting for admission)"
		}
	}
	return line
}

// unschedulable is the scheduler's reason a pending pod is not placed,
// from its PodScheduled condition ("" when it is placed or not judged).
func unschedulable(pod *corev1.Pod) string {
	if pod.Status.Phase != corev1.PodPending && pod.Status.Phase != "" {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return ""
}

// startedCount counts the started ranks of an attempt (s.mu held).
func (s *session) startedCount(attempt int32) int {
	n := 0
	for _, rp := range s.pods {
		if rp.attempt == attempt && started(rp) {
			n++
		}
	}
	return n
}

// startupFailed deletes the JobSet of a gang that did not start in time
// and says which ranks were pending and why.
func (s *session) startupFailed(ctx context.Context) *StartupError {
	l := s.l
	s.mu.Lock()
	var attempt int32
	if s.js != nil {
		attempt = s.js.Status.Restarts
	}
	byNode := map[int]*rankPod{}
	for _, rp := range s.pods {
		if rp.attempt == attempt && !rp.deleted {
			byNode[rp.node] = rp
		}
	}
	e := &StartupError{Timeout: l.StartupTimeout, Nodes: s.nodes, Attempt: attempt, Running: s.startedCount(attempt)}
	susp := suspended(s.js)
	s.mu.Unlock()
	for n := 0; n < s.nodes; n++ {
		rp := byNode[n]
		switch {
		case rp == nil && susp:
			e.Pending = append(e.Pending, PendingRank{Rank: n, Reason: "no pod: the JobSet is suspended (not admitted)"})
		case rp == nil:
			e.Pending = append(e.Pending, PendingRank{Rank: n, Reason: "no pod created"})
		case !started(rp):
			e.Pending = append(e.Pending, PendingRank{Rank: n, Pod: rp.pod.Name, Reason: s.pendingReason(ctx, rp.pod)})
		}
	}
	l.logf("%d of %d rank(s) running after %s: deleting JobSet %s/%s", e.Running, e.Nodes, l.StartupTimeout, s.ns, s.name)
	err := l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationForeground, true)
	e.Deleted, e.Deletion = err == nil, err
	return e
}

// pendingReason says why a pod is not running: the scheduler's latest
// FailedScheduling event, its PodScheduled condition, or its waiting
// containers' reasons.
func (s *session) pendingReason(ctx context.Context, pod *corev1.Pod) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	evs, err := s.l.Kube.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name + ",reason=FailedScheduling",
	})
	if err == nil {
		var latest *corev1.Event
		for i := range evs.Items {
			ev := &evs.Items[i]
			if ev.InvolvedObject.Name != pod.Name || ev.Reason != "FailedScheduling" || (ev.InvolvedObject.UID != "" && ev.InvolvedObject.UID != pod.UID) {
				continue
			}
			if latest == nil || eventTime(ev).After(eventTime(latest)) {
				latest = ev
			}
		}
		if latest != nil {
			return "FailedScheduling: " + latest.Message
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	var waiting []string
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			msg := cs.Name + ": " + w.Reason
			if w.Message != "" {
				msg += ": " + w.Message
			}
			waiting = append(waiting, msg)
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		return strings.Join(waiting, "; ")
	}
	if pod.Spec.NodeName == "" {
		return "not scheduled yet"
	}
	return fmt.Sprintf("scheduled on %s, phase %s", pod.Spec.NodeName, pod.Status.Phase)
}

func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	}
	return ev.FirstTimestamp.Time
}

// startupDeadline bounds the start of each gang attempt: armed for an
// attempt until all its ranks started, re-armed for the next one.
type startupDeadline struct {
	timeout time.Duration
	timer   *time.Timer
	c       <-chan time.Time
	armed   int32 // the attempt the timer bounds, -1 for none
}

// newStartupDeadline arms the deadline for attempt 0; a timeout of 0 never fires.
func newStartupDeadline(timeout time.Duration) *startupDeadline {
	d := &startupDeadline{timeout: timeout, armed: -1}
	if timeout > 0 {
		d.timer = time.NewTimer(timeout)
		d.c, d.armed = d.timer.C, 0
	}
	return d
}

// C fires when the armed attempt did not start in time.
func (d *startupDeadline) C() <-chan time.Time { return d.c }

// update disarms the deadline once attempt started (or waits for
// admission), and arms it anew for a later attempt.
func (d *startupDeadline) update(attempt int32, started bool) {
	switch {
	case d.timer == nil:
	case started:
		if d.armed >= 0 {
			d.timer.Stop()
			d.c, d.armed = nil, -1
		}
	case d.armed != attempt:
		d.timer.Reset(d.timeout)
		d.c, d.armed = d.timer.C, attempt
	}
}

func (d *startupDeadline) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}
