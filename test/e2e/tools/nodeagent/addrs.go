package main

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podNet is where pods get their addresses: a block of the loopback network, which Linux
// routes to this machine whole (127.0.0.0/8 on lo) without any address configured, so a
// pod's process can bind its address and others connect to it. It leaves out 127.0.0.1
// (the node's and the test bed's own services: API server, MinIO) and the 127.0.x.x
// addresses hosts give other uses (127.0.0.53, 127.0.1.1).
var podNet = netip.MustParsePrefix("127.1.0.0/16")

// nodeIP is the nodes' address (status.hostIP), that of pods with spec.hostNetwork.
const nodeIP = "127.0.0.1"

// podAddrs gives each pod an address of its own in podNet, as a pod network does, so a
// pod's name resolves to that pod and not to every pod at once (MPI's hostfile, for one,
// takes two names with one address for one host). A pod keeps its address for its life
// (by UID); a new pod takes the next free one after the last given, so an address comes
// back only after the whole block went round. Pods with spec.hostNetwork have the node's.
type podAddrs struct {
	mu   sync.Mutex
	byID map[types.UID]podAddr
	used map[uint32]bool
	next uint32 // offset in podNet of the next address to try
}

type podAddr struct {
	ip    string
	since time.Time
}

func newPodAddrs() *podAddrs {
	return &podAddrs{byID: map[types.UID]podAddr{}, used: map[uint32]bool{}, next: 1}
}

// size is the number of addresses of podNet.
func podNetSize() uint32 { return 1 << (32 - podNet.Bits()) }

// of is the pod's address, given on first sight.
func (a *podAddrs) of(pod *corev1.Pod) string {
	if pod.Spec.HostNetwork {
		return nodeIP
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if got, ok := a.byID[pod.UID]; ok {
		return got.ip
	}
	size := podNetSize()
	if len(a.used) >= int(size)-2 {
		// Every address given (65534 live pods): share the node's rather than fail.
		return nodeIP
	}
	for {
		off := a.next
		a.next = (a.next + 1) % size
		// Neither the block's first nor last address (x.x.0.0, x.x.255.255).
		if off == 0 || off == size-1 || a.used[off] {
			continue
		}
		base := podNet.Addr().As4()
		n := binary.BigEndian.Uint32(base[:]) + off
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], n)
		ip := netip.AddrFrom4(b).String()
		a.used[off] = true
		a.byID[pod.UID] = podAddr{ip: ip, since: time.Now()}
		return ip
	}
}

// retain frees the addresses of pods no longer in the cluster (not in pods) given before
// cutoff: a pod bound to this agent may get its address before the informer lists it.
func (a *podAddrs) retain(pods []*corev1.Pod, cutoff time.Time) {
	live := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		live[p.UID] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	base := podNet.Addr().As4()
	for id, got := range a.byID {
		if live[id] || got.since.After(cutoff) {
			continue
		}
		ip := netip.MustParseAddr(got.ip).As4()
		delete(a.used, binary.BigEndian.Uint32(ip[:])-binary.BigEndian.Uint32(base[:]))
		delete(a.byID, id)
	}
}
