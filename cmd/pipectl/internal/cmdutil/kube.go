package cmdutil

import (
	"errors"
	"sync"

	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"pipectl.dev/pipectl/cmd/internal/podutil/podkube"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline/argorun"
)

// KubeFlags are the cluster flags, with kubectl's meaning (podkube.KubeFlags).
type KubeFlags = podkube.KubeFlags

// AddKubeFlags registers --kubeconfig, --context and -n/--namespace on cmd.
func AddKubeFlags(cmd *cobra.Command, f *Factory) { podkube.AddKubeFlags(cmd, &f.Kube) }

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
	cfg, ns, err := podkube.RESTConfig(flags)
	if err != nil {
		return nil, err
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

// LauncherClients builds the launcher's clients from the Factory's config,
// which is loaded the kubectl way (--kubeconfig, $KUBECONFIG,
// ~/.kube/config, or the pod's in-cluster config; --context), with the
// launcher's rate limits (podkube.LauncherQPS).
func (f *Factory) LauncherClients() (launcher.Clients, string, error) {
	kc, err := f.Clients()
	if err != nil {
		return launcher.Clients{}, "", err
	}
	if kc.Config == nil {
		return launcher.Clients{}, "", errors.New("kubernetes: no client config to build the launcher's clients from")
	}
	return podkube.LauncherClientsFor(kc.Config, nil, kc.Namespace)
}
