package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	"pipectl.dev/pipectl/components"
)

// Clients are the Kubernetes API clients of the launcher.
type Clients struct {
	Kube    kubernetes.Interface
	JobSets jobsetclient.Interface
	// Dynamic creates PodGroups; only needed for podGroup gangs.
	Dynamic dynamic.Interface
}

// Defaults of a Launcher.
const (
	DefaultStartupTimeout = 10 * time.Minute
	DefaultCleanupTimeout = 2 * time.Minute
	DefaultTailLines      = 20
	// logDrainTimeout bounds the wait for the last log lines once the
	// JobSet ended (the rank containers have ended: their streams are
	// closing).
	logDrainTimeout = 2 * time.Second
)

// Launcher runs a distributed step's JobSet to its end: it creates it,
// waits until it is terminal while reporting progress and streaming every
// rank's log, and deletes it.
type Launcher struct {
	Clients
	// Logs opens the rank containers' logs (default KubeLogs of Kube).
	Logs LogSource
	// Out receives every rank's log lines, each starting "[rank N] " (or
	// "[node N] " when a pod runs several ranks).
	Out io.Writer
	// ErrOut receives progress, events and the failure summary.
	ErrOut io.Writer
	// StartupTimeout, when set, bounds the time until every rank of an
	// attempt runs; then the JobSet is deleted and Run fails with a
	// *StartupError naming the pending ranks and why they are pending.
	StartupTimeout time.Duration
	// CleanupTimeout bounds the wait for the pods to go when the launcher
	// is stopped (default DefaultCleanupTimeout).
	CleanupTimeout time.Duration
	// Keep leaves a finished JobSet in place (for debugging).
	Keep bool
	// RetryInterval is the pause before a watch is reopened after an error
	// and between polls of the cleanup (default 1s).
	RetryInterval time.Duration
}

// Result describes a JobSet that succeeded.
type Result struct {
	// Restarts is the number of gang restarts.
	Restarts int32
	// PodsCreated is the time from the JobSet's creation until every rank
	// pod of the first attempt existed (0 if never seen).
	PodsCreated time.Duration
	// Terminal is when the launcher saw the JobSet terminal.
	Terminal time.Time
}

// FailedError reports a JobSet that failed: which rank failed first, how,
// and its last log lines.
type FailedError struct {
	JobSet string
	// Reason and Message are those of the JobSet's Failed condition.
	Reason, Message string
	// Restarts is the number of gang restarts made.
	Restarts int32
	// Rank is the node rank of the first pod that failed (-1 if unknown),
	// Pod its name, ExitCode its rank container's exit code (0 if it has
	// none) and Why what happened ("exit code 3 (Error)", "Evicted: ...").
	Rank     int
	Pod      string
	ExitCode int32
	Why      string
	// Last are the last lines of that rank's log.
	Last []string
	// Result holds the timings.
	Result Result
}

func (e *FailedError) Error() string {
	var b strings.Builder
	if e.Rank >= 0 {
		fmt.Fprintf(&b, "rank %d failed: %s", e.Rank, e.Why)
	} else {
		fmt.Fprintf(&b, "the JobSet failed")
	}
	if e.Restarts > 0 {
		fmt.Fprintf(&b, " (after %d gang restart(s))", e.Restarts)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, "; JobSet %s: %s", e.JobSet, e.Message)
	}
	return b.String()
}

// PendingRank is a rank that was not running when the startup deadline passed.
type PendingRank struct {
	Rank int
	// Pod is the rank's pod ("" when it had none).
	Pod string
	// Reason says why it is pending: the scheduler's message, a waiting
	// container's reason.
	Reason string
}

// StartupError reports a gang that did not start in time.
type StartupError struct {
	Timeout  time.Duration
	Running  int
	Nodes    int
	Attempt  int32
	Pending  []PendingRank
	Deleted  bool
	Deletion error
}

func (e *StartupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "not every rank was running after %s (%d of %d running)", e.Timeout, e.Running, e.Nodes)
	if e.Deleted {
		b.WriteString("; the JobSet was deleted")
	} else if e.Deletion != nil {
		fmt.Fprintf(&b, "; deleting the JobSet failed: %v", e.Deletion)
	}
	for _, p := range e.Pending {
		if p.Pod != "" {
			fmt.Fprintf(&b, "\n  rank %d (pod %s): %s", p.Rank, p.Pod, p.Reason)
		} else {
			fmt.Fprintf(&b, "\n  rank %d: %s", p.Rank, p.Reason)
		}
	}
	return b.String()
}

func (l *Launcher) retry() time.Duration {
	if l.RetryInterval > 0 {
		return l.RetryInterval
	}
	return time.Second
}

func (l *Launcher) logf(format string, args ...any) {
	if l.ErrOut != nil {
		fmt.Fprintf(l.ErrOut, "pipectl launch: "+format+"\n", args...)
	}
}

// Run creates pg (when not nil) and js, waits for js to end and deletes it.
// nodes and procsPerNode are the gang's shape from the step's plan: the
// number of rank pods, and of rank processes in each.
// It returns the Result of a JobSet that completed, a *FailedError for one
// that failed, a *StartupError when the gang did not start in time, or
// ctx's error when ctx ended first (the JobSet is then deleted, foreground,
// and Run waits for its pods to go, up to CleanupTimeout).
func (l *Launcher) Run(ctx context.Context, js *jobsetv1alpha2.JobSet, pg *unstructured.Unstructured, nodes, procsPerNode int) (*Result, error) {
	s := &session{
		l: l, ns: js.Namespace, name: js.Name, changed: make(chan struct{}, 1),
		pods: map[types.UID]*rankPod{}, nodes: max(nodes, 1), perPod: procsPerNode <= 1,
	}
	if pg != nil {
		if err := l.createPodGroup(ctx, pg); err != nil {
			return nil, err
		}
	}
	if err := l.createJobSet(ctx, js); err != nil {
		if pg != nil {
			l.deletePodGroup(context.WithoutCancel(ctx), pg)
		}
		return nil, err
	}
	s.created = time.Now()
	l.logf("created JobSet %s/%s: %d rank pod(s)", js.Namespace, js.Name, s.nodes)
	res, err := s.wait(ctx)
	if pg != nil && !l.Keep {
		defer l.deletePodGroup(context.WithoutCancel(ctx), pg)
	}
	return res, err
}

func (l *Launcher) createPodGroup(ctx context.Context, pg *unstructured.Unstructured) error {
	if l.Dynamic == nil {
		return errors.New("a podGroup gang needs a dynamic client")
	}
	gvr := CoschedulingPodGroups
	if strings.HasPrefix(pg.GetAPIVersion(), VolcanoPodGroups.Group+"/") {
		gvr = VolcanoPodGroups
	}
	rc := l.Dynamic.Resource(gvr).Namespace(pg.GetNamespace())
	_, err := rc.Create(ctx, pg, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Left by an earlier attempt of the step.
		if err = rc.Delete(ctx, pg.GetName(), metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			_, err = rc.Create(ctx, pg, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("create PodGroup %s/%s: %w", pg.GetNamespace(), pg.GetName(), err)
	}
	l.logf("created PodGroup %s/%s (%s)", pg.GetNamespace(), pg.GetName(), pg.GetAPIVersion())
	return nil
}

func (l *Launcher) deletePodGroup(ctx context.Context, pg *unstructured.Unstructured) {
	gvr := CoschedulingPodGroups
	if strings.HasPrefix(pg.GetAPIVersion(), VolcanoPodGroups.Group+"/") {
		gvr = VolcanoPodGroups
	}
	if err := l.Dynamic.Resource(gvr).Namespace(pg.GetNamespace()).Delete(ctx, pg.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		l.logf("delete PodGroup %s: %v", pg.GetName(), err)
	}
}

func (l *Launcher) createJobSet(ctx context.Context, js *jobsetv1alpha2.JobSet) error {
	api := l.JobSets.JobsetV1alpha2().JobSets(js.Namespace)
	_, err := api.Create(ctx, js, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A JobSet of the same run and step left by an earlier launcher (a
		// retry of the step): replace it.
		l.logf("JobSet %s/%s exists (from an earlier attempt of the step): deleting it", js.Namespace, js.Name)
		if err := l.deleteJobSet(ctx, js.Namespace, js.Name, metav1.DeletePropagationForeground, true); err != nil {
			return err
		}
		_, err = api.Create(ctx, js, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("create JobSet %s/%s: %w", js.Namespace, js.Name, err)
	}
	return nil
}

// deleteJobSet deletes the JobSet with the given propagation policy and,
// when wait, waits up to CleanupTimeout until it and its pods are gone.
func (l *Launcher) deleteJobSet(ctx context.Context, ns, name string, policy metav1.DeletionPropagation, wait bool) error {
	err := l.JobSets.JobsetV1alpha2().JobSets(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete JobSet %s/%s: %w", ns, name, err)
	}
	if !wait {
		return nil
	}
	timeout := l.CleanupTimeout
	if timeout <= 0 {
		timeout = DefaultCleanupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	selector := jobsetv1alpha2.JobSetNameKey + "=" + name
	for {
		_, err := l.JobSets.JobsetV1alpha2().JobSets(ns).Get(ctx, name, metav1.GetOptions{})
		jsGone := apierrors.IsNotFound(err)
		pods, perr := l.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		left := 0
		if perr == nil {
			left = len(pods.Items)
		}
		if jsGone && perr == nil && left == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("JobSet %s/%s: still there (%d pod(s) left) after %s", ns, name, left, timeout)
		}
		sleep(ctx, l.retry())
	}
}

// rankPod is what the launcher knows of one pod of the JobSet.
type rankPod struct {
	pod     *corev1.Pod
	node    int
	attempt int32
	deleted bool
	// streaming is set once a log stream was started for the pod.
	streaming bool
	log       *components.LineWriter
	// failedSeen is when the launcher first saw the pod failed: FinishedAt
	// has whole seconds only, and a gang's ranks often fail within one.
	failedSeen time.Time
}

// session is the state of one Run.
type session struct {
	l        *Launcher
	ns, name string
	nodes    int
	perPod   bool
	created  time.Time

	mu          sync.Mutex
	outMu       sync.Mutex
	js          *jobsetv1alpha2.JobSet
	gone        bool
	pods        map[types.UID]*rankPod
	podsCreated time.Duration
	changed     chan struct{}
	logs        sync.WaitGroup
}

func (s *session) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *session) onJobSet(t watch.EventType, obj runtime.Object) {
	js, ok := obj.(*jobsetv1alpha2.JobSet)
	if !ok || js.Name != s.name {
		return
	}
	s.mu.Lock()
	if t == watch.Deleted {
		s.gone = true
	} else {
		s.js = js.DeepCopy()
	}
	s.mu.Unlock()
	s.notify()
}

func (s *session) onPod(logCtx context.Context) func(watch.EventType, runtime.Object) {
	return func(t watch.EventType, obj runtime.Object) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Labels[jobsetv1alpha2.JobSetNameKey] != s.name {
			return
		}
		s.mu.Lock()
		rp := s.pods[pod.UID]
		if rp == nil {
			rp = &rankPod{node: completionIndex(pod), attempt: restartAttempt(pod)}
			s.pods[pod.UID] = rp
			if s.podsCreated == 0 && rp.attempt == 0 && s.countAttempt(0) == s.nodes {
				s.podsCreated = time.Since(s.created)
			}
		}
		rp.pod = pod.DeepCopy()
		if rp.failedSeen.IsZero() && podFailed(pod) {
			rp.failedSeen = time.Now()
		}
		if t == watch.Deleted {
			rp.deleted = true
		}
		start := !rp.streaming && containerStarted(pod, RankContainer)
		if start {
			rp.streaming = true
			rp.log = components.NewLineWriter(&s.outMu, s.prefix(rp.node), components.NewTail(DefaultTailLines), s.l.Out)
			s.logs.Add(1)
		}
		s.mu.Unlock()
		if start {
			go s.stream(logCtx, rp, pod.Name)
		}
		s.notify()
	}
}

func (s *session) prefix(node int) string {
	if s.perPod {
		return fmt.Sprintf("[rank %d] ", node)
	}
	return fmt.Sprintf("[node %d] ", node)
}

func (s *session) who(node int) string {
	if s.perPod {
		return fmt.Sprintf("rank %d", node)
	}
	return fmt.Sprintf("node %d", node)
}

// stream copies a rank container's log to Out, line by line with its prefix.
func (s *session) stream(ctx context.Context, rp *rankPod, pod string) {
	defer s.logs.Done()
	defer rp.log.Flush()
	logs := s.l.Logs
	if logs == nil {
		logs = KubeLogs{Client: s.l.Kube}
	}
	for try := 0; ; try++ {
		r, err := logs.Open(ctx, s.ns, pod, RankContainer)
		if err == nil {
			_, err = io.Copy(rp.log, r)
			r.Close()
			if err == nil || ctx.Err() != nil {
				return
			}
		}
		if ctx.Err() != nil || try >= 4 {
			s.l.logf("%s: cannot stream the log of pod %s: %v", s.who(rp.node), pod, err)
			return
		}
		sleep(ctx, s.l.retry())
	}
}

// refreshPods lists the pods and takes in their state: the JobSet's
// watch may report a restart or the end before the pod watch reports the
// pods that caused it.
func (s *session) refreshPods(ctx context.Context, handle func(watch.EventType, runtime.Object)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pods, err := s.l.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1alpha2.JobSetNameKey + "=" + s.name})
	if err != nil {
		return
	}
	for i := range pods.Items {
		handle(watch.Modified, &pods.Items[i])
	}
}

// countAttempt counts the pods of an attempt (s.mu held).
func (s *session) countAttempt(attempt int32) int {
	n := 0
	for _, rp := range s.pods {
		if rp.attempt == attempt {
			n++
		}
	}
	return n
}

func completionIndex(pod *corev1.Pod) int {
	v, ok := pod.Annotations[AnnotationCompletionIndex]
	if !ok {
		v = pod.Labels[AnnotationCompletionIndex]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

func restartAttempt(pod *corev1.Pod) int32 {
	n, _ := strconv.Atoi(pod.Labels[LabelRestartAttempt])
	return int32(n)
}

// containerStarted reports whether the container runs or ran.
func containerStarted(pod *corev1.Pod, name string) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// started reports whether the pod's rank runs or ran.
func started(rp *rankPod) bool {
	switch rp.pod.Status.Phase {
	case corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return containerStarted(rp.pod, RankContainer)
}

// terminal returns the JobSet's terminal condition type, or "".
func terminal(js *jobsetv1alpha2.JobSet) (jobsetv1alpha2.JobSetConditionType, *metav1.Condition) {
	if js == nil {
		return "", nil
	}
	for i, c := range js.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch jobsetv1alpha2.JobSetConditionType(c.Type) {
		case jobsetv1alpha2.JobSetCompleted, jobsetv1alpha2.JobSetFailed:
			return jobsetv1alpha2.JobSetConditionType(c.Type), &js.Status.Conditions[i]
		}
	}
	switch js.Status.TerminalState {
	case string(jobsetv1alpha2.JobSetCompleted), string(jobsetv1alpha2.JobSetFailed):
		return jobsetv1alpha2.JobSetConditionType(js.Status.TerminalState), nil
	}
	return "", nil
}

func suspended(js *jobsetv1alpha2.JobSet) bool {
	return js != nil && js.Spec.Suspend != nil && *js.Spec.Suspend
}

// progress is the line of counts shown when it changes (s.mu held).
func (s *session) progress() string {
	var attempt int32
	if s.js != nil {
		attempt = s.js.Status.Restarts
	}
	pending, running, done, failed := 0, 0, 0, 0
	for _, rp := range s.pods {
		if rp.attempt != attempt {
			continue
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
	if suspended(s.js) {
		if q := s.js.Labels[LabelKueueQueue]; q != "" {
			line += fmt.Sprintf(" (JobSet suspended: waiting for admission by Kueue queue %s)", q)
		} else {
			line += " (JobSet suspended: waiting for admission)"
		}
	}
	return line
}

// wait runs the watches until the JobSet is terminal, the startup deadline
// passes or ctx ends, and cleans up.
func (s *session) wait(ctx context.Context) (*Result, error) {
	l := s.l
	watchCtx, stopWatches := context.WithCancel(ctx)
	logCtx, stopLogs := context.WithCancel(context.WithoutCancel(ctx))
	var watches sync.WaitGroup
	defer func() {
		stopWatches()
		watches.Wait()
		stopLogs()
		s.logs.Wait()
	}()
	jsAPI := l.JobSets.JobsetV1alpha2().JobSets(s.ns)
	podAPI := l.Kube.CoreV1().Pods(s.ns)
	watches.Add(2)
	go func() {
		defer watches.Done()
		watchLoop(watchCtx, metav1.ListOptions{FieldSelector: "metadata.name=" + s.name},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jsAPI.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return jsAPI.Watch(ctx, o) },
			l.retry(), s.onJobSet)
	}()
	onPod := s.onPod(logCtx)
	go func() {
		defer watches.Done()
		watchLoop(watchCtx, metav1.ListOptions{LabelSelector: jobsetv1alpha2.JobSetNameKey + "=" + s.name},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return podAPI.List(ctx, o) },
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return podAPI.Watch(ctx, o) },
			l.retry(), onPod)
	}()

	var deadline <-chan time.Time
	var timer *time.Timer
	armed := int32(-1) // the attempt whose startup the timer bounds
	if l.StartupTimeout > 0 {
		timer = time.NewTimer(l.StartupTimeout)
		defer timer.Stop()
		deadline, armed = timer.C, 0
	}
	lastProgress := ""
	var restarts int32
	for {
		select {
		case <-ctx.Done():
			l.logf("%v: deleting JobSet %s/%s and waiting for its pods to go", context.Cause(ctx), s.ns, s.name)
			stopWatches()
			if err := l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationForeground, true); err != nil {
				l.logf("%v", err)
			} else {
				l.logf("JobSet %s/%s deleted", s.ns, s.name)
			}
			return nil, ctx.Err()
		case <-deadline:
			return nil, s.startupFailed(ctx)
		case <-s.changed:
		}
		s.mu.Lock()
		js := s.js
		s.mu.Unlock()
		if cond, _ := terminal(js); cond != "" || (js != nil && js.Status.Restarts > restarts) {
			s.refreshPods(ctx, onPod)
		}
		s.mu.Lock()
		js, gone := s.js, s.gone
		if p := s.progress(); p != lastProgress {
			lastProgress = p
			l.logf("%s", p)
		}
		var attempt int32
		if js != nil {
			attempt = js.Status.Restarts
		}
		if attempt > restarts {
			for a := restarts; a < attempt; a++ {
				if f := s.firstFailure(a); f != nil {
					l.logf("gang restart %d: %s (pod %s) %s; restarting every rank", a+1, s.who(f.node), f.pod.Name, failureWhy(f.pod))
				} else {
					l.logf("gang restart %d: restarting every rank", a+1)
				}
			}
			restarts = attempt
		}
		if timer != nil {
			// The deadline bounds each attempt's start; waiting for
			// admission (a suspended JobSet, Kueue) is not part of it.
			if suspended(js) || s.startedCount(attempt) >= s.nodes {
				if armed >= 0 {
					timer.Stop()
					deadline, armed = nil, -1
				}
			} else if armed != attempt {
				timer.Reset(l.StartupTimeout)
				deadline, armed = timer.C, attempt
			}
		}
		cond, c := terminal(js)
		s.mu.Unlock()
		if gone && cond == "" {
			return nil, fmt.Errorf("JobSet %s/%s was deleted before it finished", s.ns, s.name)
		}
		if cond == "" {
			continue
		}
		res := &Result{Restarts: attempt, Terminal: time.Now()}
		s.mu.Lock()
		res.PodsCreated = s.podsCreated
		s.mu.Unlock()
		// The rank containers have ended: let their log streams finish.
		stopWatches()
		drained := make(chan struct{})
		go func() { s.logs.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(logDrainTimeout):
			stopLogs()
		}
		var err error
		if cond == jobsetv1alpha2.JobSetFailed {
			err = s.failed(js, c, *res)
		} else {
			l.logf("JobSet %s/%s completed", s.ns, s.name)
		}
		if !l.Keep {
			// The pods have ended: the garbage collector removes them.
			if derr := l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationBackground, false); derr != nil {
				l.logf("%v", derr)
			}
		}
		return res, err
	}
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
		if cs.Name == RankContainer && cs.State.Terminated != nil {
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
		if t.ExitCode == ExitConfig {
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

// startupFailed deletes the JobSet of a gang that did not start in time
// and says which ranks were pending and why.
func (s *session) startupFailed(ctx context.Context) error {
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
