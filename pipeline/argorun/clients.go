package argorun

import (
	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Clients are the clients of one cluster and the namespace in effect.
type Clients struct {
	Config    *rest.Config
	Kube      kubernetes.Interface
	Workflows wfclientset.Interface
	Namespace string
}

// Connect returns the clients of the cluster, built when first asked for
// (the CLI's from the kubeconfig): a reader of a local run never needs one.
type Connect func() (*Clients, error)
