package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Node names the node agent registers.
const (
	NodeName    = "pipectl-node"
	GPUNodeName = "pipectl-gpu-node"
)

// MinIO root credentials of the test bed's object store.
const (
	MinIOAccessKey = "pipectl"
	MinIOSecretKey = "pipectl-secret"
)

// Options configure Start. The zero value is usable.
type Options struct {
	// Dir holds certificates, data, logs and the kubeconfig; a new temp folder when empty.
	Dir string
	// ToolsDir is test/e2e/tools; found from the working directory when empty.
	ToolsDir string
	// Progress receives build output and start-up steps; os.Stderr when nil.
	Progress io.Writer
	// GPUs is the nvidia.com/gpu capacity of the GPU node (4 when 0).
	GPUs int
	// Timeout bounds start-up after the build (6 minutes when 0: a loaded 2-core machine needs more than 3 to establish the CRDs).
	Timeout time.Duration
	// Kubectl also builds kubectl (Cluster.Kubectl), for people rather than tests.
	Kubectl bool
	// Images is the node agent's image catalogue: what containers of an image see, by
	// exact reference or by reference without tag. Unknown images get nothing.
	Images map[string]Image
}

// Cluster is a running test bed. Stop it when done.
type Cluster struct {
	// Dir is the test bed's folder; Logs its log folder (one NAME.log per component).
	Dir, Logs string
	// Kubeconfig is the path of an admin kubeconfig for the API server.
	Kubeconfig string
	// Config and Client talk to the API server as cluster admin.
	Config *rest.Config
	Client kubernetes.Interface
	// APIServer is the API server's URL (https://127.0.0.1:PORT).
	APIServer string
	// MinIOEndpoint is host:port of the MinIO S3 API (plain HTTP).
	MinIOEndpoint string
	// Registry is host:port of the OCI registry (plain HTTP; registry.go): 127.0.0.1:PORT.
	Registry string
	// Kubectl is a kubectl binary of the same version, or "" when it was not built.
	Kubectl string

	components []*component
	registry   *registryServer
	ports      []int
	opts       Options
	pki        *pki
	kueue      onDemand
	cosched    onDemand
	checks     []readyCheck // what Start waits for; waitReady waits for it again
}

// readyCheck is one readiness check of the test bed.
type readyCheck struct {
	what  string
	check func(context.Context) error
}

// waitReady runs every readiness check of Start until it passes.
func (c *Cluster) waitReady(ctx context.Context) error {
	for _, ch := range c.checks {
		if err := poll(ctx, ch.what, 250*time.Millisecond, c.components, ch.check); err != nil {
			return err
		}
	}
	return nil
}

// onDemand is a component started by the first test that needs it.
type onDemand struct {
	once sync.Once
	err  error
}

// onDemandTool is what starting an on-demand component begins with: its binary
// (built when missing), the folder of the module it comes from (for its manifests),
// and n free loopback ports, which Stop then checks.
type onDemandTool struct {
	bin, moduleDir string
	ports          []int
}

func (c *Cluster) prepareTool(ctx context.Context, tool, module string, n int) (onDemandTool, error) {
	bins, err := Build(ctx, c.opts.ToolsDir, c.opts.Progress, tool)
	if err != nil {
		return onDemandTool{}, err
	}
	dir, err := toolModuleDir(ctx, c.opts.ToolsDir, tool, module)
	if err != nil {
		return onDemandTool{}, err
	}
	ports, err := freePorts(n)
	if err != nil {
		return onDemandTool{}, err
	}
	c.ports = append(c.ports, ports...)
	return onDemandTool{bin: bins[tool], moduleDir: dir, ports: ports}, nil
}

// say reports a start-up step on the test bed's progress writer.
func (c *Cluster) say(format string, args ...any) {
	fmt.Fprintf(c.opts.Progress, "testbed: "+format+"\n", args...)
}

// Start builds what is missing and starts etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, the JobSet controller (webhooks registered by loopback URL), the Argo
// workflow controller (see argo.go), MinIO, an OCI registry (in this process, see
// registry.go) and the node agent (two nodes: plain and GPU) on free loopback ports; installs the JobSet and
// Argo CRDs and returns when everything is ready. On error, whatever started is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if opts.GPUs == 0 {
		opts.GPUs = 4
	}
	if opts.Timeout == 0 {
		opts.Timeout = 6 * time.Minute
	}
	if opts.ToolsDir == "" {
		if opts.ToolsDir, err = FindToolsDir(); err != nil {
			return nil, err
		}
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "pipectl-testbed-"); err != nil {
			return nil, err
		}
	}
	if opts.Dir, err = filepath.Abs(opts.Dir); err != nil {
		return nil, err
	}
	say := func(format string, args ...any) { fmt.Fprintf(opts.Progress, "testbed: "+format+"\n", args...) }

	bwrap, err := EnsureBubblewrap(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	tools := []string{ToolEtcd, ToolKube, ToolJobSet, ToolMinIO, ToolNodeAgent,
		ToolArgoController, ToolArgoExec}
	if opts.Kubectl {
		tools = append(tools, ToolKubectl)
	}
	bins, err := Build(ctx, opts.ToolsDir, opts.Progress, tools...)
	if err != nil {
		return nil, err
	}
	say("binaries ready in %s", time.Since(began).Round(time.Second))
	jobsetDir, err := toolModuleDir(ctx, opts.ToolsDir, ToolJobSet, "sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	argoDir, err := moduleDir(ctx, "", ArgoModule)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	c := &Cluster{Dir: opts.Dir, Logs: filepath.Join(opts.Dir, "logs"), Kubectl: bins[ToolKubectl], opts: opts}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, c.LogTails(15))
			_ = c.Stop()
		}
	}()
	for _, d := range []string{c.Logs, filepath.Join(opts.Dir, "etcd"), filepath.Join(opts.Dir, "minio")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	ports, err := freePorts(11)
	if err != nil {
		return nil, err
	}
	c.ports = ports
	if c.registry, err = startRegistry(filepath.Join(opts.Dir, "registry"), filepath.Join(c.Logs, "registry.log")); err != nil {
		return nil, err
	}
	c.Registry = c.registry.addr
	c.ports = append(c.ports, c.registry.port)
	etcdPort, etcdPeer, apiPort, kcmPort, schedPort, webhookPort, jsProbe, minioPort, minioConsole, kubeletPort :=
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7], ports[8], ports[9]
	c.APIServer = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	c.MinIOEndpoint = fmt.Sprintf("127.0.0.1:%d", minioPort)

	// Certificates.
	pk, err := newPKI(filepath.Join(opts.Dir, "pki"))
	if err != nil {
		return nil, err
	}
	c.pki = pk
	serving, err := pk.issue("apiserver", "kube-apiserver", nil, []string{"127.0.0.1", "localhost", "10.0.0.1",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return nil, err
	}
	admin, err := pk.issue("admin", "pipectl-admin", []string{"system:masters"}, nil)
	if err != nil {
		return nil, err
	}
	kubeletClient, err := pk.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil)
	if err != nil {
		return nil, err
	}
	frontProxy, err := pk.issue("front-proxy-client", "front-proxy-client", nil, nil)
	if err != nil {
		return nil, err
	}
	kubeletServing, err := pk.issue("kubelet", "pipectl-nodeagent", nil, []string{"127.0.0.1", "localhost", NodeName, GPUNodeName})
	if err != nil {
		return nil, err
	}
	webhookDir, err := pk.webhookCerts("jobset-webhook")
	if err != nil {
		return nil, err
	}
	sa, err := pk.serviceAccountKey()
	if err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(opts.Dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, c.APIServer, pk, admin); err != nil {
		return nil, err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	c.Config.QPS, c.Config.Burst = 50, 100
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}

	env := cleanEnv()
	start := func(name, bin string, args []string, env []string) (*component, error) {
		comp, err := startComponent(c.Logs, name, bin, args, env)
		if err != nil {
			return nil, err
		}
		c.components = append(c.components, comp)
		return comp, nil
	}
	// etcd and MinIO.
	say("starting etcd, MinIO")
	etcd, err := start("etcd", bins[ToolEtcd], []string{
		"--name=testbed", "--data-dir=" + filepath.Join(opts.Dir, "etcd"),
		fmt.Sprintf("--listen-client-urls=http://127.0.0.1:%d", etcdPort),
		fmt.Sprintf("--advertise-client-urls=http://127.0.0.1:%d", etcdPort),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", etcdPeer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", etcdPeer),
		fmt.Sprintf("--initial-cluster=testbed=http://127.0.0.1:%d", etcdPeer),
		"--unsafe-no-fsync", "--log-level=warn",
	}, env)
	if err != nil {
		return nil, err
	}
	minio, err := start("minio", bins[ToolMinIO], []string{
		"server", filepath.Join(opts.Dir, "minio"),
		fmt.Sprintf("--address=127.0.0.1:%d", minioPort),
		fmt.Sprintf("--console-address=127.0.0.1:%d", minioConsole),
		"--quiet",
	}, append(env, "MINIO_ROOT_USER="+MinIOAccessKey, "MINIO_ROOT_PASSWORD="+MinIOSecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off"))
	if err != nil {
		return nil, err
	}
	if err := poll(ctx, "etcd", 200*time.Millisecond, []*component{etcd},
		httpReady(fmt.Sprintf("http://127.0.0.1:%d/health", etcdPort))); err != nil {
		return nil, err
	}

	// API server.
	say("starting kube-apiserver")
	apiserver, err := start("kube-apiserver", bins[ToolKube], []string{"kube-apiserver",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir=" + filepath.Join(opts.Dir, "pki", "apiserver-certs"),
		"--tls-cert-file=" + serving.cert, "--tls-private-key-file=" + serving.key,
		"--client-ca-file=" + pk.caPath(),
		"--requestheader-client-ca-file=" + pk.caPath(), "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + frontProxy.cert, "--proxy-client-key-file=" + frontProxy.key,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + sa.cert, "--service-account-signing-key-file=" + sa.key,
		"--endpoint-reconciler-type=none", // 127.0.0.1 is not a valid endpoint address
		"--kubelet-client-certificate=" + kubeletClient.cert, "--kubelet-client-key=" + kubeletClient.key,
		"--kubelet-certificate-authority=" + pk.caPath(),
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}, env)
	if err != nil {
		return nil, err
	}
	if err := poll(ctx, "kube-apiserver", 250*time.Millisecond, []*component{etcd, apiserver}, c.apiReady); err != nil {
		return nil, err
	}

	// Controllers and scheduler.
	say("starting kube-controller-manager, kube-scheduler, jobset, node agent")
	// kube-controller-manager starts once the CRDs are installed: its garbage collector
	// reads the API's resources at start and again only every 30 s, and until it knows
	// JobSets their foreground deletion and owner-reference collection wait.
	startKCM := func() (*component, error) {
		return start("kube-controller-manager", bins[ToolKube], []string{"kube-controller-manager",
			"--kubeconfig=" + c.Kubeconfig,
			"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
			"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", kcmPort),
			"--leader-elect=false",
			"--controllers=job-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller," +
				"namespace-controller,root-ca-certificate-publisher-controller,ttl-after-finished-controller,pod-garbage-collector-controller," +
				"node-lifecycle-controller",
			"--root-ca-file=" + pk.caPath(),
			"--service-account-private-key-file=" + sa.key,
			"--cluster-name=pipectl-testbed",
			"--v=1",
		}, env)
	}
	sched, err := start("kube-scheduler", bins[ToolKube], []string{"kube-scheduler",
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", schedPort),
		"--leader-elect=false",
		"--v=1",
	}, env)
	if err != nil {
		return nil, err
	}

	// JobSet controller: certificates from our CA, webhooks on a loopback port.
	jsConfig := filepath.Join(opts.Dir, "jobset-config.yaml")
	if err := os.WriteFile(jsConfig, []byte(managerConfig("config.jobset.x-k8s.io/v1alpha1", webhookPort, webhookDir, jsProbe)), 0o644); err != nil {
		return nil, err
	}
	jobset, err := start("jobset", bins[ToolJobSet], []string{"--config=" + jsConfig, "--zap-devel=false"},
		append(env, "KUBECONFIG="+c.Kubeconfig))
	if err != nil {
		return nil, err
	}

	// Node agent.
	imagesFile, err := writeImages(opts.Dir, argoImages(opts.Images, bins[ToolArgoExec]))
	if err != nil {
		return nil, err
	}
	agent, err := start("nodeagent", bins[ToolNodeAgent], []string{
		"--images=" + imagesFile,
		"--kubeconfig=" + c.Kubeconfig,
		fmt.Sprintf("--listen=127.0.0.1:%d", kubeletPort),
		"--tls-cert=" + kubeletServing.cert, "--tls-key=" + kubeletServing.key,
		"--state-dir=" + filepath.Join(opts.Dir, "nodeagent"),
		"--api-host=127.0.0.1", fmt.Sprintf("--api-port=%d", apiPort),
		"--bwrap=" + bwrap,
		"--registry=" + c.Registry,
		"--node=" + NodeName, "--gpu-node=" + GPUNodeName, "--gpus=" + strconv.Itoa(opts.GPUs),
	}, env)
	if err != nil {
		return nil, err
	}

	say("installing CRDs (JobSet, Argo)")
	all := []*component{etcd, apiserver, sched, jobset, agent, minio}
	if err := installCRDs(ctx, c.Config, jobsetDir, argoDir, all); err != nil {
		return nil, err
	}
	if err := registerJobSetWebhooks(ctx, c.Client, jobsetDir, webhookPort, pk.caPEM()); err != nil {
		return nil, err
	}
	if _, err := startKCM(); err != nil {
		return nil, err
	}
	if _, err := c.startArgo(ctx, bins[ToolArgoController], env); err != nil {
		return nil, err
	}

	say("waiting for components")
	c.checks = []readyCheck{
		{"kube-apiserver", c.apiReady},
		{"kube-controller-manager", httpReady(fmt.Sprintf("https://127.0.0.1:%d/healthz", kcmPort))},
		{"kube-scheduler", httpReady(fmt.Sprintf("https://127.0.0.1:%d/healthz", schedPort))},
		{"jobset", httpReady(fmt.Sprintf("http://127.0.0.1:%d/readyz", jsProbe))},
		{"minio", httpReady(fmt.Sprintf("http://127.0.0.1:%d/minio/health/ready", minioPort))},
		{"registry", c.registry.ready},
		{"nodes Ready", c.nodesReady(NodeName, GPUNodeName)},
		{"default service account and kube-root-ca.crt", c.namespaceReady("default")},
		{"jobset webhooks", func(ctx context.Context) error { return jobSetDryRun(ctx, c.Config) }},
		{"argo workflow controller", argoHealthy},
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	say("ready in %s: export KUBECONFIG=%s", time.Since(began).Round(time.Second), c.Kubeconfig)
	return c, nil
}

// apiReady checks the API server's /readyz.
func (c *Cluster) apiReady(ctx context.Context) error {
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s", err, body)
	}
	return nil
}

// nodesReady checks that the nodes are registered, Ready, and rid of the not-ready taint
// the API server puts on new nodes (the node lifecycle controller removes it).
func (c *Cluster) nodesReady(names ...string) func(context.Context) error {
	return func(ctx context.Context) error { return c.nodesReadyNow(ctx, names) }
}

func (c *Cluster) nodesReadyNow(ctx context.Context, names []string) error {
	for _, name := range names {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			return fmt.Errorf("node %s: %w", name, errNotYet)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable {
				return fmt.Errorf("node %s still has taint %s: %w", name, taint.Key, errNotYet)
			}
		}
	}
	return nil
}

// namespaceReady checks what pods of a namespace need: the default service account
// (serviceaccount controller) and the kube-root-ca.crt config map (root CA publisher).
func (c *Cluster) namespaceReady(ns string) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	}
}

// WaitNamespaceReady waits until pods of ns can start (service account, root CA).
func (c *Cluster) WaitNamespaceReady(ctx context.Context, ns string) error {
	return poll(ctx, "namespace "+ns, 200*time.Millisecond, c.components, c.namespaceReady(ns))
}

// Stop stops every component (SIGTERM, SIGKILL after 10 s), node agent first so pod
// processes go with it, and reports an error when a port of the test bed is still
// listened on afterwards. The folder stays (logs); remove it with os.RemoveAll if wanted.
func (c *Cluster) Stop() error {
	for i := len(c.components) - 1; i >= 0; i-- {
		c.components[i].stop(10 * time.Second)
	}
	c.components = nil
	if c.registry != nil {
		if err := c.registry.stop(); err != nil {
			return fmt.Errorf("stop the registry: %w", err)
		}
		c.registry = nil
	}
	if busy := listening(c.ports); len(busy) > 0 {
		return fmt.Errorf("testbed stopped, but ports %v are still listened on", busy)
	}
	return nil
}

// LogTails returns the last n lines of each component's log, with headers.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	entries, _ := os.ReadDir(c.Logs)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "----- %s (last %d lines) -----\n%s\n", filepath.Join(c.Logs, name), n, tailFile(filepath.Join(c.Logs, name), n))
	}
	return b.String()
}

// Env is the environment that points kubectl and pipectl at the test bed, as KEY=VALUE.
func (c *Cluster) Env() []string {
	return []string{
		"KUBECONFIG=" + c.Kubeconfig,
		"AWS_ENDPOINT_URL=http://" + c.MinIOEndpoint,
		"AWS_ACCESS_KEY_ID=" + MinIOAccessKey,
		"AWS_SECRET_ACCESS_KEY=" + MinIOSecretKey,
		"AWS_REGION=us-east-1",
	}
}

// httpReady is a readiness check: GET url answers 200 (TLS certificates not checked:
// components serve self-signed ones on loopback).
func httpReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := insecureClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

var insecureClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// managerConfig is the configuration file of a controller-runtime manager (JobSet's,
// Kueue's, of config API apiVersion) as the test bed runs it: no leader election, our
// certificates, webhooks and health probes on loopback ports, no metrics server.
func managerConfig(apiVersion string, webhookPort int, certDir string, probePort int) string {
	return fmt.Sprintf(`apiVersion: %s
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
`, apiVersion, webhookPort, certDir, probePort)
}

func writeKubeconfig(path, server string, pk *pki, user keyPair) error {
	cert, err := os.ReadFile(user.cert)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(user.key)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testbed"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: pk.caPEM()}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["testbed"] = &clientcmdapi.Context{Cluster: "testbed", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "testbed"
	return clientcmd.WriteToFile(*cfg, path)
}

// cleanEnv is this process's environment without variables that would point the
// components elsewhere.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT":
			continue
		}
		out = append(out, kv)
	}
	return out
}
