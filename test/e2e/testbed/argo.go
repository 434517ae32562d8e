package testbed

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Argo Workflows in the test bed: the workflow controller v3.7.18 runs out of cluster
// (--kubeconfig) and watches every namespace; its pods' executor, argoexec, is the image
// ArgoExecImage, which the node agent's catalogue gives the built argoexec binary at
// /bin/argoexec (on PATH: Argo's init container runs `argoexec init`, which copies it to
// /var/run/argo for the emissary in the main container).
const (
	ToolArgoController = "argo-workflow-controller"
	ToolArgoExec       = "argoexec"
	// ArgoNamespace holds the controller's ConfigMap (its "installation namespace").
	ArgoNamespace = "argo"
	// ArgoExecImage is the executor image the controller puts in workflow pods.
	ArgoExecImage = "argoexec:e2e"
	// argoHealthPort is where the controller serves /healthz (fixed by Argo: :6060).
	argoHealthPort = 6060
)

// argoImages adds the executor image to a catalogue (a copy: the caller's map is not changed).
func argoImages(images map[string]Image, argoexec string) map[string]Image {
	out := map[string]Image{}
	for k, v := range images {
		out[k] = v
	}
	out[ArgoExecImage] = Image{Binds: []Bind{{Host: argoexec, Path: "/bin/argoexec", ReadOnly: true}}}
	return out
}

// argoConfig is the controller's ConfigMap: the executor image, no metrics servers
// (their ports would be fixed), no leader election delays.
func argoConfig() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "workflow-controller-configmap", Namespace: ArgoNamespace},
		Data: map[string]string{
			"executor":        "image: " + ArgoExecImage + "\nimagePullPolicy: IfNotPresent\n",
			"metricsConfig":   "enabled: false\n",
			"telemetryConfig": "enabled: false\n",
		},
	}
}

// startArgo creates the controller's namespace and ConfigMap and starts the controller.
func (c *Cluster) startArgo(ctx context.Context, bin string, env []string) (*component, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArgoNamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ArgoNamespace).Create(ctx, argoConfig(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	host, _ := os.Hostname()
	comp, err := startComponent(c.Logs, "argo-workflow-controller", bin, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--namespace=" + ArgoNamespace,
		"--executor-image=" + ArgoExecImage,
		"--executor-image-pull-policy=IfNotPresent",
		"--qps=50", "--burst=100",
		"--loglevel=info",
	}, append(env, "LEADER_ELECTION_IDENTITY=testbed-"+host, "LEADER_ELECTION_DISABLE=true",
		// Requeue a running workflow after 1 s instead of 10 s: steps of a few seconds.
		"DEFAULT_REQUEUE_TIME=1s"))
	if err != nil {
		return nil, err
	}
	c.components = append(c.components, comp)
	return comp, nil
}

// argoHealthy checks the controller's /healthz.
func argoHealthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz", argoHealthPort), nil)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("argo controller /healthz: %s: %w", resp.Status, errNotYet)
	}
	return nil
}
