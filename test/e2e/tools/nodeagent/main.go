// Command nodeagent is the test bed's kubelet: it registers Nodes with the API server
// (through virtual-kubelet's node and pod controllers) and runs every pod bound to them as
// local processes, each container inside bubblewrap with the pod's volumes, hosts file and
// service-account token mounted where the pod spec says. It serves the kubelet API for
// `kubectl logs`. Images of the test bed's registry (--registry) are pulled by digest and
// their containers run in the image's unpacked root file system (pull.go); other images
// are not pulled: the processes run the host's binaries, and an image catalogue (--images)
// says what a container of a known image sees (binds, working directory, env).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == overlayExecCmd {
		err := overlayExec(os.Args[2:])
		fmt.Fprintln(os.Stderr, "nodeagent "+overlayExecCmd+":", err)
		os.Exit(127)
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nodeagent:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	kubeconfig string
	listen     string
	tlsCert    string
	tlsKey     string
	stateDir   string
	apiHost    string
	apiPort    string
	bwrap      string
	plainNode  string
	gpuNode    string
	gpus       int
	images     string
	registry   string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("nodeagent", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:10250", "address of the kubelet API (HTTPS)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serving certificate of the kubelet API (required)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "serving key of the kubelet API (required)")
	fs.StringVar(&o.stateDir, "state-dir", "", "folder for pod folders, logs and the hosts file (required)")
	fs.StringVar(&o.apiHost, "api-host", "127.0.0.1", "KUBERNETES_SERVICE_HOST given to pods")
	fs.StringVar(&o.apiPort, "api-port", "", "KUBERNETES_SERVICE_PORT given to pods (required)")
	fs.StringVar(&o.bwrap, "bwrap", "bwrap", "bubblewrap binary")
	fs.StringVar(&o.plainNode, "node", "pipectl-node", "name of the plain node")
	fs.StringVar(&o.gpuNode, "gpu-node", "pipectl-gpu-node", "name of the GPU node (tainted nvidia.com/gpu=present:NoSchedule); empty for none")
	fs.IntVar(&o.gpus, "gpus", 4, "nvidia.com/gpu capacity of the GPU node")
	fs.StringVar(&o.images, "images", "", "JSON image catalogue: what containers of each image see (binds, workingDir, env)")
	fs.StringVar(&o.registry, "registry", "", "a registry (HOST:PORT, plain HTTP) whose images are pulled (by digest, layers cached under the state dir) and run in their root file system; empty for none")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var missing []error
	for name, v := range map[string]string{"kubeconfig": o.kubeconfig, "tls-cert": o.tlsCert, "tls-key": o.tlsKey, "state-dir": o.stateDir, "api-port": o.apiPort} {
		if v == "" {
			missing = append(missing, fmt.Errorf("flag --%s is required", name))
		}
	}
	return o, errors.Join(missing...)
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	restCfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	restCfg.QPS, restCfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kube client: %w", err)
	}
	host, portStr, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("--listen port: %w", err)
	}

	images, err := loadImages(o.images)
	if err != nil {
		return err
	}
	hosts, err := newHostsFile(o.stateDir)
	if err != nil {
		return err
	}
	var pull *puller
	if o.registry != "" {
		if pull, err = newPuller(o.registry, filepath.Join(o.stateDir, "images"), logger); err != nil {
			return err
		}
	}
	rt, err := newRuntime(runtimeConfig{
		client:   client,
		stateDir: o.stateDir,
		apiHost:  o.apiHost,
		apiPort:  o.apiPort,
		bwrap:    o.bwrap,
		hostIP:   host,
		hosts:    hosts,
		images:   images,
		puller:   pull,
		log:      logger,
	})
	if err != nil {
		return err
	}
	defer rt.shutdown()

	// Every pod name and JobSet DNS name resolves to its pod's own loopback address.
	go func() {
		if err := hosts.watch(ctx, client, logger); err != nil && ctx.Err() == nil {
			logger.Error("hosts watcher stopped", "err", err)
		}
	}()

	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return fmt.Errorf("kubelet serving certificate: %w", err)
	}
	srv := &http.Server{
		Addr:              o.listen,
		Handler:           kubeletAPI(rt),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("kubelet API listen: %w", err)
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("kubelet API stopped", "err", err)
		}
	}()
	defer srv.Close()

	specs := []*corev1.Node{nodeSpec(o.plainNode, host, port, 0)}
	if o.gpuNode != "" {
		specs = append(specs, nodeSpec(o.gpuNode, host, port, o.gpus))
	}
	errc := make(chan error, len(specs))
	var nodes []*nodeutil.Node
	for _, spec := range specs {
		n, err := nodeutil.NewNode(spec.Name,
			func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
				return rt.forNode(spec.Name, pc.Pods), nil, nil
			},
			nodeutil.WithClient(client),
			func(c *nodeutil.NodeConfig) error {
				c.NodeSpec = *spec
				c.SkipDownwardAPIResolution = true // the runtime resolves env itself (status.podIP included)
				c.NumWorkers = 4
				c.InformerResyncPeriod = 30 * time.Second
				return nil
			},
		)
		if err != nil {
			return fmt.Errorf("node %s: %w", spec.Name, err)
		}
		nodes = append(nodes, n)
		go func() { errc <- n.Run(ctx) }()
	}
	for i, n := range nodes {
		if err := n.WaitReady(ctx, 2*time.Minute); err != nil {
			return fmt.Errorf("node %s not ready: %w", specs[i].Name, err)
		}
		logger.Info("node ready", "node", specs[i].Name)
	}
	fmt.Fprintln(os.Stderr, "nodeagent: ready")

	select {
	case <-ctx.Done():
		logger.Info("stopping")
		return nil
	case err := <-errc:
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("node controller stopped: %w", err)
	}
}

// nodeSpec is the Node object a node registers: loopback address, the kubelet API port,
// plenty of CPU and memory, and for a GPU node nvidia.com/gpu capacity and its taint.
func nodeSpec(name, ip string, port, gpus int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "pipectl-process-node",
			},
		},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodePending,
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux",
				Architecture:    "amd64",
				KubeletVersion:  "v1.34.2-pipectl-nodeagent",
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse},
			},
		},
	}
	if gpus > 0 {
		q := resource.MustParse(strconv.Itoa(gpus))
		n.Status.Capacity["nvidia.com/gpu"] = q
		n.Status.Allocatable["nvidia.com/gpu"] = q
		n.Labels["nvidia.com/gpu.present"] = "true"
		n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// kubeletAPI serves the kubelet endpoints the API server proxies to (logs, pods, and exec
// for signals only).
func kubeletAPI(rt *runtime) http.Handler {
	return api.PodHandler(api.PodHandlerConfig{
		GetContainerLogs: rt.containerLogs,
		RunInContainer:   rt.runInContainer,
		GetPods:          rt.allPods,
		GetPodsFromKubernetes: func(ctx context.Context) ([]*corev1.Pod, error) {
			return rt.allPods(ctx)
		},
	}, false)
}
