package cmdutil

import (
	"fmt"
	"sync"

	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline/argorun"
)

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
func AddKubeFlags(cmd *cobra.Command, f *Factory) {
	fl := cmd.Flags()
	fl.StringVar(&f.Kube.Kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG, then ~/.kube/config)")
	fl.StringVar(&f.Kube.Context, "context", "", "the kubeconfig context (default: its current context)")
	fl.StringVarP(&f.Kube.Namespace, "namespace", "n", "", "the namespace (default: the context's, then \"default\")")
}

// kubeState is the lazily built clients.
type kubeState struct {
	once    sync.Once
	clients *argorun.Clients
	err     error
}

// Clients builds the cluster clients once, from the kubeconfig as kubectl
// loads it. Commands that never call it never need a kubeconfig. Tests set
// Factory.KubeClientsFunc instead.
func (f *Factory) Clients() (*argorun.Clients, error) {
	if f.KubeClientsFunc != nil {
		return f.KubeClientsFunc()
	}
	f.kube.once.Do(func() {
		f.kube.clients, f.kube.err = loadClients(f.Kube)
	})
	return f.kube.clients, f.kube.err
}

func loadClients(flags KubeFlags) (*argorun.Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = flags.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: flags.Context}
	overrides.Context.Namespace = flags.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	wc, err := wfclientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &argorun.Clients{Config: cfg, Kube: kc, Workflows: wc, Namespace: ns}, nil
}

// LauncherClients adds the JobSet and dynamic clients to the Factory's, which
// are built the kubectl way (--kubeconfig, $KUBECONFIG, ~/.kube/config, or
// the pod's in-cluster config; --context).
func (f *Factory) LauncherClients() (launcher.Clients, string, error) {
	kc, err := f.Clients()
	if err != nil {
		return launcher.Clients{}, "", err
	}
	js, err := jobsetclient.NewForConfig(kc.Config)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	dyn, err := dynamic.NewForConfig(kc.Config)
	if err != nil {
		return launcher.Clients{}, "", err
	}
	return launcher.Clients{Kube: kc.Kube, JobSets: js, Dynamic: dyn}, kc.Namespace, nil
}
