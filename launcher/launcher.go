package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline/gang/progress"
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
	// StallTimeout, when set, stops an attempt none of whose ranks printed
	// a line for that long once all its rank pods ran: its pods are
	// deleted and the JobSet restarts the gang (counted against its
	// maxRestarts), or, with no restart left, the JobSet is deleted and Run
	// fails with a *gang.StallError naming each rank's last line.
	StallTimeout time.Duration
	// Ended, when set, is told of every gang attempt that did not
	// succeed: stalled (with each rank's state) or failed.
	Ended func(record.GangAttempt)
	// Progress, when set, is given the series of the metrics the ranks
	// report (echoed by their pods' runtime) as a local gang gives it
	// (progress.Publisher): while the gang runs, at most every
	// progress.PublishInterval, thinned; the whole series when Run ends.
	Progress func(record.Progress)
	// CleanupTimeout bounds the wait for the pods to go when the launcher
	// is stopped (default DefaultCleanupTimeout).
	CleanupTimeout time.Duration
	// Keep leaves a finished JobSet in place (for debugging).
	Keep bool
	// RetryInterval is the pause before a watch is reopened after an error
	// and between polls of the cleanup (default 1s).
	RetryInterval time.Duration
	// LogOutage is how long a rank's log stream is tried again while it
	// cannot be opened (default DefaultLogOutage).
	LogOutage time.Duration
}

// DefaultLogOutage bounds the retries of a rank's log stream: an API
// server restart (as the cluster drills do) takes seconds, its caches a
// few more.
const DefaultLogOutage = 2 * time.Minute

func (l *Launcher) logOutage() time.Duration {
	if l.LogOutage > 0 {
		return l.LogOutage
	}
	return DefaultLogOutage
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
		procs: max(procsPerNode, 1), tr: progress.NewTracker(0, nil), current: -1, tracked: -1, stalled: map[int32]bool{},
	}
	s.pub = &progress.Publisher{Tracker: s.tr, Publish: l.Progress}
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
	s.pub.End()
	if pg != nil && !l.Keep {
		defer l.deletePodGroup(context.WithoutCancel(ctx), pg)
	}
	return res, err
}

func (l *Launcher) createPodGroup(ctx context.Context, pg *unstructured.Unstructured) error {
	if l.Dynamic == nil {
		return errors.New("a podGroup gang needs a dynamic client")
	}
	rc := l.Dynamic.Resource(jobset.PodGroupResourceOf(pg)).Namespace(pg.GetNamespace())
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
	if err := l.Dynamic.Resource(jobset.PodGroupResourceOf(pg)).Namespace(pg.GetNamespace()).Delete(ctx, pg.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
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
