package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// runtimeConfig is what the runtime needs from the command line.
type runtimeConfig struct {
	client   kubernetes.Interface
	stateDir string
	apiHost  string
	apiPort  string
	bwrap    string
	hostIP   string
	hosts    *hostsFile
	images   imageCatalogue
	puller   *puller // images of the test bed's registry; nil: none pulled
	log      *slog.Logger
}

// runtime runs the pods of every node of this agent as local processes.
type runtime struct {
	runtimeConfig
	mounts *mountPoints
	self   string // this program, for its overlay-exec helper

	mu        sync.Mutex
	pods      map[string]*podRun // by namespace/name
	notifiers map[string]func(*corev1.Pod)
	listers   map[string]corev1listers.PodLister
}

func newRuntime(cfg runtimeConfig) (*runtime, error) {
	if err := os.MkdirAll(filepath.Join(cfg.stateDir, "pods"), 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("this program's path: %w", err)
	}
	return &runtime{
		runtimeConfig: cfg,
		self:          self,
		mounts:        newMountPoints(),
		pods:          map[string]*podRun{},
		notifiers:     map[string]func(*corev1.Pod){},
		listers:       map[string]corev1listers.PodLister{},
	}, nil
}

// shutdown kills every pod's processes at once and removes the mount points it made.
func (r *runtime) shutdown() {
	r.mu.Lock()
	pods := make([]*podRun, 0, len(r.pods))
	for _, p := range r.pods {
		pods = append(pods, p)
	}
	r.mu.Unlock()
	for _, p := range pods {
		p.stop(0)
	}
	for _, p := range pods {
		<-p.done
		r.mounts.release(p.key)
	}
	r.mounts.releaseAll()
}

func podKey(ns, name string) string { return ns + "/" + name }

// notify sends the pod's current status to the pod controller of its node. The object is
// the informer's latest copy of the pod with our status, so no stale metadata is written back.
func (r *runtime) notify(p *podRun) {
	r.mu.Lock()
	cb := r.notifiers[p.node]
	lister := r.listers[p.node]
	r.mu.Unlock()
	if cb == nil {
		return
	}
	base := p.pod
	if lister != nil {
		if cur, err := lister.Pods(p.pod.Namespace).Get(p.pod.Name); err == nil && cur.UID == p.pod.UID {
			base = cur
		}
	}
	out := base.DeepCopy()
	out.Status = p.status(base.Status)
	cb(out)
}

func (r *runtime) lookup(ns, name string) (*podRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pods[podKey(ns, name)]
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to the node agent", ns, name)
	}
	return p, nil
}

func (r *runtime) allPods(context.Context) ([]*corev1.Pod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(r.pods))
	for _, p := range r.pods {
		out = append(out, p.snapshot())
	}
	return out, nil
}

func (r *runtime) createPod(node string, pod *corev1.Pod) error {
	key := podKey(pod.Namespace, pod.Name)
	r.mu.Lock()
	if old, ok := r.pods[key]; ok {
		r.mu.Unlock()
		if old.pod.UID == pod.UID {
			return nil
		}
		return fmt.Errorf("pod %s: an older pod of that name (uid %s) is still being removed", key, old.pod.UID)
	}
	dir := filepath.Join(r.stateDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	p := newPodRun(key, node, pod.DeepCopy(), dir)
	p.ip = r.hosts.podIP(pod)
	r.pods[key] = p
	r.mu.Unlock()

	r.log.Info("pod created", "pod", key, "node", node)
	r.notify(p)
	go r.runPod(p)
	return nil
}

// deletePod stops the pod's processes (SIGTERM to each process group, SIGKILL after the
// grace period), reports the terminal status and forgets the pod.
func (r *runtime) deletePod(pod *corev1.Pod) error {
	p, err := r.lookup(pod.Namespace, pod.Name)
	if err != nil {
		return err
	}
	if pod.UID != "" && p.pod.UID != pod.UID {
		return errdefs.NotFoundf("pod %s/%s with uid %s is not known", pod.Namespace, pod.Name, pod.UID)
	}
	grace := 30 * time.Second
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	if !p.markDeleted() {
		return nil
	}
	r.log.Info("pod deleted", "pod", p.key, "grace", grace)
	p.stop(grace)
	go func() {
		<-p.done
		r.notify(p)
		r.removeFromAPI(p)
		r.mu.Lock()
		if r.pods[p.key] == p {
			delete(r.pods, p.key)
		}
		r.mu.Unlock()
		r.mounts.release(p.key)
		if err := os.RemoveAll(p.dir); err != nil {
			r.log.Warn("remove pod dir", "pod", p.key, "err", err)
		}
	}()
	return nil
}

// removeFromAPI deletes the pod object once its processes are gone, as the kubelet does
// (virtual-kubelet would wait out the whole grace period: it does not resync a pod on a
// status change). The terminal status goes first, so the Job controller counts the pod.
func (r *runtime) removeFromAPI(p *podRun) {
	if r.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods := r.client.CoreV1().Pods(p.pod.Namespace)
	for wait := time.Now().Add(2 * time.Second); time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
		cur, err := pods.Get(ctx, p.pod.Name, metav1.GetOptions{})
		if err != nil || cur.UID != p.pod.UID {
			return
		}
		if cur.Status.Phase == corev1.PodSucceeded || cur.Status.Phase == corev1.PodFailed {
			break
		}
	}
	opts := metav1.NewDeleteOptions(0)
	opts.Preconditions = metav1.NewUIDPreconditions(string(p.pod.UID))
	if err := pods.Delete(ctx, p.pod.Name, *opts); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.log.Warn("remove pod from the API server", "pod", p.key, "err", err)
	}
}

// nodeProvider is the virtual-kubelet provider of one node: the shared runtime seen through
// the pods bound to that node.
type nodeProvider struct {
	r    *runtime
	node string
}

func (r *runtime) forNode(node string, pods corev1listers.PodLister) *nodeProvider {
	r.mu.Lock()
	r.listers[node] = pods
	r.mu.Unlock()
	return &nodeProvider{r: r, node: node}
}

func (n *nodeProvider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	return n.r.createPod(n.node, pod)
}

// UpdatePod accepts label, annotation and image changes; processes keep running.
func (n *nodeProvider) UpdatePod(context.Context, *corev1.Pod) error { return nil }

func (n *nodeProvider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	return n.r.deletePod(pod)
}

func (n *nodeProvider) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := n.r.lookup(ns, name)
	if err != nil {
		return nil, err
	}
	return p.snapshot(), nil
}

func (n *nodeProvider) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	pod, err := n.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

func (n *nodeProvider) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	all, err := n.r.allPods(ctx)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, p := range all {
		if p.Spec.NodeName == n.node {
			out = append(out, p)
		}
	}
	return out, nil
}

func (n *nodeProvider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	n.r.mu.Lock()
	n.r.notifiers[n.node] = cb
	n.r.mu.Unlock()
}

func (n *nodeProvider) GetContainerLogs(ctx context.Context, ns, pod, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	return n.r.containerLogs(ctx, ns, pod, container, opts)
}

func (n *nodeProvider) RunInContainer(ctx context.Context, ns, pod, container string, cmd []string, attach api.AttachIO) error {
	return n.r.runInContainer(ctx, ns, pod, container, cmd, attach)
}

func (n *nodeProvider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by the pipectl node agent")
}

func (n *nodeProvider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: n.node, StartTime: metav1.Now()}}, nil
}

func (n *nodeProvider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, nil
}

func (n *nodeProvider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errdefs.InvalidInput("port-forward is not supported by the pipectl node agent: pods listen on 127.0.0.1 directly")
}
