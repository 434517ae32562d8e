package argorun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// Argo's pod label and annotation, and the container running the step.
const (
	labelWorkflow  = "workflows.argoproj.io/workflow"
	annotationNode = "workflows.argoproj.io/node-id"
	mainContainer  = "main"
	// maxKeptLog bounds the log kept per step for the store.
	maxKeptLog = 16 << 20
)

// DefaultOutage is how long Follow waits for an API server that does not answer.
const DefaultOutage = 5 * time.Minute

// transient says whether err is the API server away or overloaded rather
// than an answer, so that asking again later may succeed.
func transient(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsTimeout(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
}

// ErrDeleted is Follow's error when the workflow was deleted while followed.
var ErrDeleted = errors.New("the workflow was deleted")

// Follower watches one workflow until it ends: a line per step phase change
// (or a live table on a terminal) to Status, every step pod's main
// container log to Logs, each line prefixed "[step] ".
type Follower struct {
	Clients *Clients
	Name    string
	// Steps are the pipeline's steps, in order.
	Steps  []string
	Logs   io.Writer
	Status io.Writer
	// TTY redraws a table of the steps on Status instead of printing lines.
	TTY bool
	// Poll is the delay between retries (1s when 0).
	Poll time.Duration
	// Outage bounds how long Follow waits for an API server that does not
	// answer (restarting, or the network away) before it gives up
	// (DefaultOutage when 0).
	Outage time.Duration

	mu     sync.Mutex
	phases map[string]string
	// loops are the rows of loop steps, by step: their iterations
	// ("trial[0..2]  2 succeeded, 1 running"); failed the iterations
	// whose failure was reported.
	loops   map[string]string
	failed  map[string]bool
	drawn   int
	streams map[string]bool // pod names whose logs stream
	kept    map[string]*bytes.Buffer
	wg      sync.WaitGroup
	start   time.Time
}

// Follow watches the workflow until it completes (returning it) or ctx
// ends (returning ctx's error and the last workflow seen).
func (f *Follower) Follow(ctx context.Context) (*wfv1.Workflow, error) {
	f.init()
	if f.TTY {
		f.draw()
	}
	logCtx, stopLogs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLogs()
	api := f.Clients.Workflows.ArgoprojV1alpha1().Workflows(f.Clients.Namespace)
	var last *wfv1.Workflow
	var away time.Time // when the API server stopped answering; zero while it answers
	for {
		wf, err := api.Get(ctx, f.Name, metav1.GetOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			if !transient(err) {
				return last, fmt.Errorf("workflow %s: %w", f.Name, err)
			}
			if away.IsZero() {
				away = time.Now()
			} else if time.Since(away) > f.Outage {
				return last, fmt.Errorf("workflow %s: the API server did not answer for %s: %w", f.Name, f.Outage, err)
			}
			select {
			case <-ctx.Done():
				return last, ctx.Err()
			case <-time.After(f.Poll):
			}
			continue
		}
		away = time.Time{}
		last = wf
		if f.observe(logCtx, wf) {
			break
		}
		w, err := api.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", f.Name).String(), ResourceVersion: wf.ResourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			select {
			case <-ctx.Done():
				return last, ctx.Err()
			case <-time.After(f.Poll):
			}
			continue
		}
		done := false
	events:
		for {
			var ev watch.Event
			var open bool
			select {
			case <-ctx.Done():
				break events
			case ev, open = <-w.ResultChan():
			}
			if !open {
				break
			}
			if ev.Type == watch.Deleted {
				w.Stop()
				f.finishLogs(stopLogs)
				return last, fmt.Errorf("workflow %s: %w", f.Name, ErrDeleted)
			}
			wf, ok := ev.Object.(*wfv1.Workflow)
			if !ok || wf.Name != f.Name {
				continue
			}
			last = wf
			if f.observe(logCtx, wf) {
				done = true
				break
			}
		}
		w.Stop()
		if done {
			break
		}
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
	}
	f.finishLogs(stopLogs)
	return last, nil
}

// init readies the follower's state.
func (f *Follower) init() {
	if f.Poll == 0 {
		f.Poll = time.Second
	}
	if f.Outage == 0 {
		f.Outage = DefaultOutage
	}
	f.phases, f.streams, f.kept, f.start = map[string]string{}, map[string]bool{}, map[string]*bytes.Buffer{}, time.Now()
	f.loops, f.failed = map[string]string{}, map[string]bool{}
	for _, s := range f.Steps {
		f.phases[s] = record.StatusPending // lines say what changed from here
	}
}

// finishLogs waits a little for the log streams to drain, then stops them.
func (f *Follower) finishLogs(stop context.CancelFunc) {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		stop()
		<-done
	}
	f.mu.Lock()
	f.erase()
	f.mu.Unlock()
}

// observe reports step changes, starts log streams, and says whether the
// workflow has ended. The logs of pods that ended before they were first
// seen (on --attach, or a pod quicker than the watch) are printed whole,
// step by step, before any live stream starts.
func (f *Follower) observe(ctx context.Context, wf *wfv1.Workflow) bool {
	nodes := stepNodes(wf, f.Steps)
	for _, s := range f.Steps {
		for _, pod := range stepPods(wf, s, nodes[s]) {
			if pod.Fulfilled() {
				f.replay(ctx, pod.step, pod.ID)
			}
		}
	}
	changed := false
	for _, s := range f.Steps {
		n := nodes[s]
		phase := record.StatusPending
		msg := ""
		if n != nil {
			phase = stepStatus(n.Phase)
			msg = n.Message
			for _, pod := range stepPods(wf, s, n) {
				f.stream(ctx, pod.step, pod.ID)
			}
		}
		var loop string
		var failed []record.StepRecord
		if n != nil && n.Type == wfv1.NodeTypeTaskGroup {
			if name, counts, fails, ok := loopView(wf, s); ok {
				loop, failed = fmt.Sprintf("%-12s %s", name, counts), fails
			}
		}
		f.mu.Lock()
		if f.phases[s] != phase {
			f.phases[s] = phase
			changed = true
			if !f.TTY {
				line := fmt.Sprintf("%s %s", s, phase)
				if msg != "" && phase == record.StatusFailed {
					line += ": " + msg
				}
				fmt.Fprintln(f.Status, line)
			}
		}
		if f.loops[s] != loop {
			f.loops[s] = loop
			changed = true
			if !f.TTY {
				fmt.Fprintln(f.Status, loop)
			}
		}
		// As locally, only a failed iteration gets a line of its own.
		for _, it := range failed {
			if !f.failed[it.Name] {
				f.failed[it.Name] = true
				changed = true
				if !f.TTY {
					fmt.Fprintf(f.Status, "%s %s: %s\n", it.Name, it.Status, it.Message)
				}
			}
		}
		f.mu.Unlock()
	}
	if changed && f.TTY {
		f.mu.Lock()
		f.erase()
		f.draw()
		f.mu.Unlock()
	}
	return wf.Status.Fulfilled()
}

// erase removes the table from a terminal (mu held).
func (f *Follower) erase() {
	if f.TTY && f.drawn > 0 {
		fmt.Fprintf(f.Status, "\x1b[%dA\x1b[J", f.drawn)
		f.drawn = 0
	}
}

// draw prints the table (mu held).
func (f *Follower) draw() {
	if !f.TTY {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s (%s)\n", f.Name, time.Since(f.start).Round(time.Second))
	rows := 1
	for _, s := range f.Steps {
		fmt.Fprintf(&b, "  %s %-24s %s\n", symbol(f.phases[s]), s, f.phases[s])
		rows++
		if loop := f.loops[s]; loop != "" {
			fmt.Fprintf(&b, "      %s\n", loop)
			rows++
		}
	}
	fmt.Fprint(f.Status, b.String())
	f.drawn = rows
}

func symbol(status string) string {
	switch status {
	case record.StatusSucceeded:
		return "✓"
	case record.StatusFailed, record.StatusCancelled:
		return "✗"
	case record.StatusRunning:
		return "●"
	case record.StatusSkipped:
		return "-"
	}
	return "○"
}

// stream starts following the log of the pod of node id, once.
func (f *Follower) stream(ctx context.Context, step, nodeID string) {
	if !f.claim(step, nodeID) {
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.follow(ctx, step, nodeID)
	}()
}

// replayTimeout bounds the wait for the log of a pod that already ended.
const replayTimeout = 10 * time.Second

// replay copies the whole log of the ended pod of node id, once, before
// returning.
func (f *Follower) replay(ctx context.Context, step, nodeID string) {
	if !f.claim(step, nodeID) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	f.follow(ctx, step, nodeID)
}

// claim says whether the log of node id is still to be copied, and marks
// it taken.
func (f *Follower) claim(step, nodeID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streams[nodeID] {
		return false
	}
	f.streams[nodeID] = true
	if f.kept[step] == nil {
		f.kept[step] = &bytes.Buffer{}
	}
	return true
}

// nodePod returns the pod of node nodeID of workflow, or nil when it has none.
func nodePod(ctx context.Context, pods corev1client.PodInterface, workflow, nodeID string) (*corev1.Pod, error) {
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: labelWorkflow + "=" + workflow})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Annotations[annotationNode] == nodeID {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// follow finds the node's pod and copies its main container's log, retrying
// until the container started; it gives up once the node ended with its pod
// gone or its container never started.
func (f *Follower) follow(ctx context.Context, step, nodeID string) {
	pods := f.Clients.Kube.CoreV1().Pods(f.Clients.Namespace)
	var since *metav1.Time // where a broken stream resumes
	for {
		pod, _ := nodePod(ctx, pods, f.Name, nodeID) // not found yet: retried
		if pod != nil && (pod.Status.Phase != corev1.PodPending || started(pod)) {
			if rc, err := pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: mainContainer, Follow: true, SinceTime: since}).Stream(ctx); err == nil {
				err := f.copyLines(step, rc)
				rc.Close()
				if err == nil || ctx.Err() != nil {
					return
				}
				// The stream broke (the API server or the node went away):
				// resume from this second, which may repeat a few lines.
				now := metav1.Now()
				since = &now
				f.line(step, fmt.Sprintf("(pipectl: the log stream broke (%v); resuming, a few lines may repeat)", err))
			}
		}
		if ctx.Err() != nil {
			return
		}
		ended, err := f.nodeEnded(ctx, nodeID)
		switch {
		case err != nil && !transient(err):
			return
		case err == nil && ended && (pod == nil || !started(pod)):
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(f.Poll):
		}
	}
}

// nodeEnded says whether the node has ended.
func (f *Follower) nodeEnded(ctx context.Context, nodeID string) (bool, error) {
	wf, err := f.Clients.Workflows.ArgoprojV1alpha1().Workflows(f.Clients.Namespace).Get(ctx, f.Name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	n, ok := wf.Status.Nodes[nodeID]
	return ok && n.Fulfilled(), nil
}

func started(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == mainContainer && (c.State.Running != nil || c.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// copyLines copies r's lines to the step's log; its error is the stream's
// (nil at its end).
func (f *Follower) copyLines(step string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line := sc.Text(); !ExecutorLine(line) {
			f.line(step, line)
		}
	}
	return sc.Err()
}

// line prints one line of the step's log and keeps it.
func (f *Follower) line(step, line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.erase()
	fmt.Fprintf(f.Logs, "[%s] %s\n", step, line)
	if k := f.kept[step]; k.Len() < maxKeptLog {
		k.WriteString(line + "\n")
	}
	f.draw()
}

// ExecutorLine says whether a line of a main container's log is Argo's executor
// speaking (the emissary wrapping the step's command logs `time="…" level=info
// msg="sub-process exited" argo=true …`): not the step's output, so not shown or kept.
func ExecutorLine(line string) bool {
	return strings.HasPrefix(line, `time="`) && strings.Contains(line, " level=") && strings.Contains(line, " argo=true")
}

// KeptLogs returns the log lines streamed per step (unprefixed).
func (f *Follower) KeptLogs() map[string][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]byte, len(f.kept))
	for s, b := range f.kept {
		out[s] = bytes.Clone(b.Bytes())
	}
	return out
}

// StoreLogs uploads the streamed log of each step that has no step.log in
// the store yet (a launcher pod's log, which carries its ranks' lines).
func (f *Follower) StoreLogs(ctx context.Context, store artifacts.Store) error {
	for step, b := range f.KeptLogs() {
		key := record.LogKey(f.Name, step)
		if _, err := store.Stat(ctx, key); err == nil {
			continue
		}
		if err := store.Put(ctx, key, bytes.NewReader(b), int64(len(b))); err != nil {
			return fmt.Errorf("store the log of step %s: %w", step, err)
		}
	}
	return nil
}

// Stop asks Argo to stop the workflow (spec.shutdown: Stop): running pods
// are stopped, exit handlers still run.
func Stop(ctx context.Context, kc *Clients, name string) error {
	patch := []byte(`{"spec":{"shutdown":"Stop"}}`)
	_, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{})
	return err
}
