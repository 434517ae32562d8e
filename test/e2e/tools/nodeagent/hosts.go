package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// hostsFile is the /etc/hosts every pod sees (bind-mounted read-only by bubblewrap, so
// nothing on the host changes): localhost, and for every pod in the cluster its name and,
// with spec.hostname and spec.subdomain, the DNS names a headless service gives it
// (`js-workers-0-0.js`, `….js.ns.svc`, `….js.ns.svc.cluster.local`), each on the pod's
// own address (addrs: a loopback address of its own, as a pod network gives each pod
// one). It is rewritten in place (same inode) so running sandboxes see new pods.
type hostsFile struct {
	path  string
	addrs *podAddrs
	mu    sync.Mutex
	last  string
}

func newHostsFile(stateDir string) (*hostsFile, error) {
	h := &hostsFile{path: filepath.Join(stateDir, "hosts"), addrs: newPodAddrs()}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	if err := h.write(nil); err != nil {
		return nil, err
	}
	return h, nil
}

// hostNames are the names a pod answers to.
func hostNames(pod *corev1.Pod) []string {
	names := []string{pod.Name}
	if pod.Spec.Hostname != "" {
		names = append(names, pod.Spec.Hostname)
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain != "" {
		fqdn := pod.Spec.Hostname + "." + pod.Spec.Subdomain
		names = append(names, fqdn, fqdn+"."+pod.Namespace+".svc", fqdn+"."+pod.Namespace+".svc.cluster.local")
	}
	return names
}

// renderHosts lists every name of the pods on the pod's address (addr). A name two pods
// answer to (the same pod name in two namespaces) goes to the pod first in namespace/name
// order: one file serves every pod, so a namespace's own pod cannot be preferred.
func renderHosts(pods []*corev1.Pod, addr func(*corev1.Pod) string) string {
	var b strings.Builder
	b.WriteString("# written by the pipectl test bed node agent\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	ip := map[string]string{}
	var names []string
	for _, p := range sorted {
		for _, n := range hostNames(p) {
			if _, seen := ip[n]; !seen {
				ip[n] = addr(p)
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s\t%s\n", ip[n], n)
	}
	return b.String()
}

// podIP is the pod's address (podAddrs.of).
func (h *hostsFile) podIP(pod *corev1.Pod) string {
	if h.addrs == nil {
		return nodeIP
	}
	return h.addrs.of(pod)
}

// write rewrites the file in place when its content changes.
func (h *hostsFile) write(pods []*corev1.Pod) error {
	content := renderHosts(pods, h.podIP)
	h.mu.Lock()
	defer h.mu.Unlock()
	if content == h.last {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(content))); err != nil {
		return err
	}
	h.last = content
	return nil
}

// watch keeps the file in step with the cluster's pods until ctx ends.
func (h *hostsFile) watch(ctx context.Context, client kubernetes.Interface, log *slog.Logger) error {
	factory := informers.NewSharedInformerFactory(client, 5*time.Minute)
	inf := factory.Core().V1().Pods()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, n any) { poke(n) },
		DeleteFunc: poke,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		pods, err := inf.Lister().List(everything())
		if err != nil {
			return err
		}
		if err := h.write(pods); err != nil {
			log.Error("write hosts file", "err", err)
		}
		h.addrs.retain(pods, time.Now().Add(-time.Minute))
	}
}
