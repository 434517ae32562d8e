package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/gang"
)

// The launcher's stall watch is the local gang's (package gang): every
// line a rank pod prints is its progress (gang's progress.Tracker), and so
// is every metric a rank reports (echoed by the pod's runtime as progress
// reports, see reports.go), and a
// gang none of whose ranks made progress for StallTimeout is stalled
// (gang.Stalled). The clock of an attempt starts once all its rank pods
// run: waiting for pods (Pending, a suspended JobSet) is startup time,
// bounded by StartupTimeout, never stall time.

// stallTicker returns the channel of the stall watch's ticks (nil, never
// ready, without a stall timeout) and its stop function.
func (s *session) stallTicker() (<-chan time.Time, func()) {
	if s.l.StallTimeout <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(gang.PollInterval(s.l.StallTimeout))
	return t.C, t.Stop
}

// rankOf is the global rank whose progress the log of a pod of node
// stands for: the node's first rank.
func (s *session) rankOf(node int) int { return node * s.procs }

// progressWriter passes a pod's log on to its line writer and counts it
// as its rank's progress while the pod's attempt is the current one.
type progressWriter struct {
	s       *session
	attempt int32
	watched io.Writer // counts the progress
	plain   io.Writer
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	watched := w.s.current == w.attempt
	w.s.mu.Unlock()
	if watched {
		return w.watched.Write(p)
	}
	return w.plain.Write(p)
}

// logWriter is where the log of rp goes (s.mu held): its progress
// reports are taken out (reportFilter), its runtime's own lines shown,
// its other lines are its rank's progress.
func (s *session) logWriter(rp *rankPod) *reportFilter {
	pw := &progressWriter{s: s, attempt: rp.attempt, watched: s.tr.Writer(s.rankOf(rp.node), rp.log), plain: rp.log}
	return &reportFilter{next: pw, own: rp.log, report: func(line []byte) bool { return s.onReport(rp, line) }}
}

// checkStall starts watching attempt once all its ranks run, and stops a
// watched attempt that stalled: with restarts left, its pods are deleted
// (the JobSet restarts the gang, counted against maxRestarts), else the
// JobSet is deleted and the *gang.StallError returned.
func (s *session) checkStall(ctx context.Context) error {
	s.mu.Lock()
	js := s.js
	if js == nil || s.gone {
		s.mu.Unlock()
		return nil
	}
	if cond, _ := terminal(js); cond != "" {
		s.mu.Unlock()
		return nil
	}
	attempt := js.Status.Restarts
	s.follow(attempt)
	if s.tracked != attempt {
		if !suspended(js) && s.startedCount(attempt) >= s.nodes && !s.stalled[attempt] {
			s.tr.Started()
			s.tracked = attempt
		}
		s.mu.Unlock()
		return nil
	}
	se := gang.Stalled(s.tr, s.l.StallTimeout)
	if se == nil {
		s.mu.Unlock()
		return nil
	}
	s.stalled[attempt] = true
	s.tracked = -1
	maxRestarts := maxRestartsOf(js)
	s.mu.Unlock()
	restart := attempt < maxRestarts
	n := int(attempt) + 1
	gang.LogStall(s.l.logf, n, se)
	why := fmt.Sprintf("no restart left (maxRestarts %d)", maxRestarts)
	if restart {
		if err := s.stopAttempt(ctx, attempt); err != nil {
			// A gang whose pods stay is never restarted: end it rather
			// than wait on it.
			restart, why = false, fmt.Sprintf("its rank pods cannot be stopped (%v)", err)
		}
	}
	s.tellEnded(gang.AttemptRecord(n, se, restart))
	if !restart {
		s.l.logf("%s: deleting JobSet %s/%s", why, s.ns, s.name)
		if err := s.l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationForeground, true); err != nil {
			s.l.logf("%v", err)
		}
		return se
	}
	s.l.logf("gang attempt %d stalled; restarting all %d rank pod(s) (restart %d of %d)", n, s.nodes, n, maxRestarts)
	return nil
}

// follow makes attempt (when later than the current one) the one whose
// ranks' lines are their progress, afresh (s.mu held).
func (s *session) follow(attempt int32) {
	if attempt <= s.current {
		return
	}
	ranks := make([]int, s.nodes)
	for n := range ranks {
		ranks[n] = s.rankOf(n)
	}
	s.tr.Begin(int(attempt)+1, ranks)
	s.current = attempt
}

// stopAttempt deletes the rank pods of attempt (at most maxDeletes at
// once): the Job sees them fail and the JobSet restarts the whole gang. It fails when a pod cannot be deleted
// (no RBAC delete on pods, say).
func (s *session) stopAttempt(ctx context.Context, attempt int32) error {
	s.mu.Lock()
	var names []string
	for _, rp := range s.pods {
		if rp.attempt == attempt && !rp.deleted {
			names = append(names, rp.pod.Name)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	began := time.Now()
	errs := make([]error, len(names))
	sem := make(chan struct{}, maxDeletes)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.l.Kube.CoreV1().Pods(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs[i] = fmt.Errorf("delete stalled pod %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	s.l.logf("timing stall-pods-deleted=%s (%d pod(s))", time.Since(began).Round(time.Millisecond), len(names))
	return errors.Join(errs...)
}

// maxDeletes bounds the pod deletions a stalled attempt's stop makes at
// once.
const maxDeletes = 16

func maxRestartsOf(js *jobsetv1alpha2.JobSet) int32 {
	if fp := js.Spec.FailurePolicy; fp != nil {
		return fp.MaxRestarts
	}
	return 0
}

// tellEnded tells the launcher's Ended of a gang attempt that did not succeed.
func (s *session) tellEnded(a record.GangAttempt) {
	if s.l.Ended != nil {
		s.l.Ended(a)
	}
}

// failedAttempt is the record of attempt, failed with why.
func failedAttempt(attempt int32, why string, restarted bool) record.GangAttempt {
	return record.GangAttempt{Attempt: int(attempt) + 1, Reason: record.ReasonFailed, Message: why, Restarted: restarted}
}

// stallWhy says how a stalled attempt ended, for the restart line.
func stallWhy(timeout time.Duration) string {
	return fmt.Sprintf("stalled (no rank made progress for %s)", timeout)
}
