// Package podkube is what `pipectl launch` adds to podutil: the cluster
// flags and the launcher's clients. The pod runtime (pipectl-pod: exec)
// does not link it, nor the Kubernetes client it imports.
package podkube

import (
	"fmt"

	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/launcher"
)

// Env is what `pipectl launch` takes from a factory: podutil.Env and the
// cluster.
type Env interface {
	podutil.Env
	// KubeFlags are the cluster flags (AddKubeFlags binds them).
	KubeFlags() *KubeFlags
	// LauncherClients connects to the cluster as the launcher does.
	LauncherClients() (launcher.Clients, string, error)
}

// KubeFlags are the cluster flags, with kubectl's meaning.
type KubeFlags struct {
	// Kubeconfig is --kubeconfig (default: $KUBECONFIG, then ~/.kube/config).
	Kubeconfig string
	// Context is --context (default: the kubeconfig's current context).
	Context string
	// Namespace is -n/--namespace (default: the context's namespace, then "default").
	Namespace string
}

// AddKubeFlags registers --kubeconfig, --context and -n/--namespace on cmd.
func AddKubeFlags(cmd *cobra.Command, f *KubeFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.Kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG, then ~/.kube/config)")
	fl.StringVar(&f.Context, "context", "", "the kubeconfig context (default: its current context)")
	fl.StringVarP(&f.Namespace, "namespace", "n", "", "the namespace (default: the context's, then \"default\")")
}

// RESTConfig loads the cluster's config and namespace as kubectl does
// (--kubeconfig, $KUBECONFIG, ~/.kube/config, or the pod's in-cluster
// config; --context; -n).
func RESTConfig(flags KubeFlags) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = flags.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: flags.Context}
	overrides.Context.Namespace = flags.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, ns, nil
}

// The launcher's client-side rate limits (requests a second, and at
// once). client-go's defaults, 5 and 10, spread a 64-pod gang's requests
// over seconds: deleting a stalled attempt's rank pods took 11 s,
// opening their log streams as long.
const (
	LauncherQPS   = 50
	LauncherBurst = 100
)

// LauncherClientsFor builds the launcher's clients of cfg, with at least
// the launcher's rate limits: kube when given (else a new one), the
// JobSet and dynamic clients.
func LauncherClientsFor(cfg *rest.Config, kube kubernetes.Interface, ns string) (launcher.Clients, string, error) {
	if cfg.RateLimiter == nil && cfg.QPS < LauncherQPS {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = LauncherQPS, max(cfg.Burst, LauncherBurst)
	}
	if kube == nil {
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return launcher.Clients{}, "", err
		}
		kube = kc
	}
	js, err := jobsetclient.NewForConfig(cfg)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	return launcher.Clients{Kube: kube, JobSets: js, Dynamic: dyn}, ns, nil
}
