package launcher

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// rankPod is what the launcher knows of one pod of the JobSet.
type rankPod struct {
	pod     *corev1.Pod
	node    int
	attempt int32
	deleted bool
	// streaming is set once a log stream was started for the pod.
	streaming bool
	log       *process.LineWriter
	// out is where the stream goes: log, without the progress reports,
	// counted as the rank's progress while the stall watch follows the
	// pod's attempt.
	out *reportFilter
	// failedSeen is when the launcher first saw the pod failed: FinishedAt
	// has whole seconds only, and a gang's ranks often fail within one.
	failedSeen time.Time
}

// session is the state of one Run.
type session struct {
	l        *Launcher
	ns, name string
	nodes    int
	procs    int
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
	// tr follows the ranks' progress in attempt current (their lines),
	// whose stall clock runs once it is tracked (-1 while none is: its
	// pods are not all running yet); stalled are the attempts stopped as
	// stalled.
	tr      *progress.Tracker
	pub     *progress.Publisher // hands tr's series to Launcher.Progress
	current int32
	tracked int32
	stalled map[int32]bool
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
			s.follow(rp.attempt)
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
		start := !rp.streaming && containerStarted(pod, jobset.RankContainer)
		if start {
			rp.streaming = true
			rp.log = process.NewLineWriter(&s.outMu, s.prefix(rp.node), process.NewTail(DefaultTailLines), s.l.Out)
			rp.out = s.logWriter(rp)
			s.logs.Add(1)
		}
		s.mu.Unlock()
		if start {
			go s.stream(logCtx, rp, pod.Name)
		}
		s.notify()
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
	v, ok := pod.Annotations[jobset.AnnotationCompletionIndex]
	if !ok {
		v = pod.Labels[jobset.AnnotationCompletionIndex]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

func restartAttempt(pod *corev1.Pod) int32 {
	n, _ := strconv.Atoi(pod.Labels[jobset.LabelRestartAttempt])
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
	return containerStarted(rp.pod, jobset.RankContainer)
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
	onPod := s.watch(watchCtx, logCtx, &watches)
	startup := newStartupDeadline(l.StartupTimeout)
	defer startup.stop()
	stallTick, stopStallTick := s.stallTicker()
	defer stopStallTick()
	publishTick := time.NewTicker(time.Second)
	defer publishTick.Stop()
	lastProgress := ""
	var restarts int32
	for {
		select {
		case <-ctx.Done():
			stopWatches()
			s.cancelled(ctx)
			return nil, ctx.Err()
		case <-startup.C():
			err := s.startupFailed(ctx)
			s.tellEnded(record.GangAttempt{Attempt: int(err.Attempt) + 1, Reason: record.ReasonStartup, Message: err.Error()})
			return nil, err
		case <-stallTick:
			if err := s.checkStall(ctx); err != nil {
				stopWatches()
				return nil, err
			}
			continue
		case <-publishTick.C:
			s.pub.Live()
			continue
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
		s.logRestarts(restarts, attempt)
		restarts = max(restarts, attempt)
		// The deadline bounds each attempt's start; waiting for admission
		// (a suspended JobSet, Kueue) is not part of it.
		startup.update(attempt, suspended(js) || s.startedCount(attempt) >= s.nodes)
		cond, c := terminal(js)
		res := &Result{Restarts: attempt, PodsCreated: s.podsCreated}
		s.mu.Unlock()
		if gone && cond == "" {
			return nil, fmt.Errorf("JobSet %s/%s was deleted before it finished", s.ns, s.name)
		}
		if cond == "" {
			continue
		}
		res.Terminal = time.Now()
		// The rank containers have ended: let their log streams finish.
		stopWatches()
		s.drainLogs(stopLogs)
		return res, s.ended(ctx, js, cond, c, *res)
	}
}

// watch starts the watches of the JobSet and of its pods (logs of rank
// containers follow logCtx); it returns the pods' event handler.
func (s *session) watch(watchCtx, logCtx context.Context, watches *sync.WaitGroup) func(watch.EventType, runtime.Object) {
	l := s.l
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
	return onPod
}

// cancelled deletes the JobSet of a stopped launcher, foreground, and waits
// for its pods to go.
func (s *session) cancelled(ctx context.Context) {
	l := s.l
	l.logf("%v: deleting JobSet %s/%s and waiting for its pods to go", context.Cause(ctx), s.ns, s.name)
	if err := l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationForeground, true); err != nil {
		l.logf("%v", err)
	} else {
		l.logf("JobSet %s/%s deleted", s.ns, s.name)
	}
}

// logRestarts reports the gang restarts from attempt from to attempt to,
// naming the rank that failed each (s.mu held).
func (s *session) logRestarts(from, to int32) {
	for a := from; a < to; a++ {
		switch f := s.firstFailure(a); {
		case s.stalled[a]:
			s.l.logf("gang restart %d: attempt %d %s; restarting every rank", a+1, a+1, stallWhy(s.l.StallTimeout))
		case f != nil:
			why := fmt.Sprintf("%s (pod %s) %s", s.who(f.node), f.pod.Name, failureWhy(f.pod))
			s.l.logf("gang restart %d: %s; restarting every rank", a+1, why)
			s.tellEnded(failedAttempt(a, why, true))
		default:
			s.l.logf("gang restart %d: restarting every rank", a+1)
			s.tellEnded(failedAttempt(a, "the JobSet restarted the gang", true))
		}
	}
}

// drainLogs waits for the rank log streams to end, up to logDrainTimeout,
// then stops them.
func (s *session) drainLogs(stopLogs context.CancelFunc) {
	drained := make(chan struct{})
	go func() { s.logs.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(logDrainTimeout):
		stopLogs()
	}
}

// ended reports the end of a terminal JobSet (a *FailedError when it
// failed) and, unless Keep, deletes it.
func (s *session) ended(ctx context.Context, js *jobsetv1alpha2.JobSet, cond jobsetv1alpha2.JobSetConditionType, c *metav1.Condition, res Result) error {
	l := s.l
	var err error
	if cond == jobsetv1alpha2.JobSetFailed {
		err = s.failed(js, c, res)
	} else {
		l.logf("JobSet %s/%s completed", s.ns, s.name)
	}
	if !l.Keep {
		// The pods have ended: the garbage collector removes them.
		if derr := l.deleteJobSet(context.WithoutCancel(ctx), s.ns, s.name, metav1.DeletePropagationBackground, false); derr != nil {
			l.logf("%v", derr)
		}
	}
	return err
}
