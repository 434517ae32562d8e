package launcher

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/launcher/jobset"
)

// firstFailure returns the pod of the attempt that failed first (s.mu held):
// the earliest FinishedAt; within the same second (its precision), the one
// the launcher saw fail first; then the lowest rank. The others usually
// failed because it did (a peer closed the connection).
func (s *session) firstFailure(attempt int32) *rankPod {
	var first *rankPod
	var firstAt time.Time
	for _, rp := range s.pods {
		if rp.attempt != attempt || !podFailed(rp.pod) {
			continue
		}
		at := finishedAt(rp.pod)
		if first == nil || failedBefore(rp, at, first, firstAt) {
			first, firstAt = rp, at
		}
	}
	return first
}

// failedBefore orders two failed pods of an attempt (see firstFailure).
func failedBefore(a *rankPod, aAt time.Time, b *rankPod, bAt time.Time) bool {
	if !aAt.Equal(bAt) {
		return aAt.Before(bAt)
	}
	if !a.failedSeen.Equal(b.failedSeen) && !a.failedSeen.IsZero() && !b.failedSeen.IsZero() {
		return a.failedSeen.Before(b.failedSeen)
	}
	return a.node < b.node
}

// podFailed reports whether the pod failed or its rank container exited non-zero.
func podFailed(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed {
		return true
	}
	t := terminated(pod)
	return t != nil && t.ExitCode != 0
}

func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == jobset.RankContainer && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

func finishedAt(pod *corev1.Pod) time.Time {
	if t := terminated(pod); t != nil && !t.FinishedAt.IsZero() {
		return t.FinishedAt.Time
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// failureWhy says how a failed pod failed.
func failureWhy(pod *corev1.Pod) string {
	if t := terminated(pod); t != nil {
		why := fmt.Sprintf("exited with code %d", t.ExitCode)
		if t.Reason != "" {
			why += " (" + t.Reason + ")"
		}
		if t.ExitCode == jobset.ExitConfig {
			why += ": a failure no restart heals"
		}
		return why
	}
	why := "failed"
	if pod.Status.Reason != "" {
		why += ": " + pod.Status.Reason
	}
	if pod.Status.Message != "" {
		why += ": " + pod.Status.Message
	}
	return why
}

// failed builds the error of a failed JobSet and shows its summary.
func (s *session) failed(js *jobsetv1alpha2.JobSet, c *metav1.Condition, res Result) error {
	e := &FailedError{JobSet: s.ns + "/" + s.name, Restarts: js.Status.Restarts, Rank: -1, Result: res}
	if c != nil {
		e.Reason, e.Message = c.Reason, c.Message
	}
	s.mu.Lock()
	f := s.firstFailure(js.Status.Restarts)
	if f == nil {
		// The failed pods of the last attempt may be gone: any attempt.
		for a := js.Status.Restarts; a >= 0 && f == nil; a-- {
			f = s.firstFailure(a)
		}
	}
	if f != nil {
		e.Rank, e.Pod, e.Why = f.node, f.pod.Name, failureWhy(f.pod)
		if t := terminated(f.pod); t != nil {
			e.ExitCode = t.ExitCode
		}
		if f.log != nil {
			e.Last = f.log.Last()
		}
	}
	s.mu.Unlock()
	s.tellEnded(failedAttempt(js.Status.Restarts, e.Error(), false))
	l := s.l
	if f != nil {
		l.logf("step failed: %s (pod %s) %s", s.who(f.node), f.pod.Name, e.Why)
		if len(e.Last) > 0 {
			l.logf("last %d line(s) of %s:", len(e.Last), s.who(f.node))
			for _, line := range e.Last {
				if l.ErrOut != nil {
					fmt.Fprintf(l.ErrOut, "  | %s\n", line)
				}
			}
		}
	}
	if e.Message != "" {
		l.logf("JobSet %s failed: %s: %s", e.JobSet, e.Reason, e.Message)
	}
	return e
}
