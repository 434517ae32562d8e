package testbed

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// ToolKueue is Kueue's controller manager, started on demand by StartKueue.
const ToolKueue = "kueue"

// Kueue's API group and the resources tests create.
var (
	KueueResourceFlavors = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	KueueClusterQueues   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	KueueLocalQueues     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	KueueWorkloads       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
)

// StartKueue starts Kueue (sigs.k8s.io/kueue, the version tools/kueue pins) once: it
// builds it when missing, installs its CRDs (conversion webhooks by loopback URL),
// starts it managing JobSets that name a queue, registers its webhooks for Kueue's own
// objects and JobSets, and returns when they answer. Other tests never pay for it.
func (c *Cluster) StartKueue(ctx context.Context) error {
	c.kueue.once.Do(func() { c.kueue.err = c.startKueue(ctx) })
	return c.kueue.err
}

func (c *Cluster) startKueue(ctx context.Context) error {
	began := time.Now()
	t, err := c.prepareTool(ctx, ToolKueue, "sigs.k8s.io/kueue", 3)
	if err != nil {
		return err
	}
	dir, ports := t.moduleDir, t.ports
	webhookPort, probePort, visibilityPort := ports[0], ports[1], ports[2]

	certDir, err := c.pki.webhookCerts("kueue-webhook")
	if err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}

	c.say("installing Kueue's CRDs")
	files, err := filepath.Glob(filepath.Join(dir, "config", "components", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Kueue CRD manifests in %s (%v)", dir, err)
	}
	sort.Strings(files)
	converted, err := kueueConvertedCRDs(filepath.Join(dir, "config", "components", "crd", "kustomization.yaml"))
	if err != nil {
		return err
	}
	convertURL := fmt.Sprintf("https://127.0.0.1:%d/convert", webhookPort)
	if err := applyCRDFiles(ctx, c.Config, files, c.components, func(crd *apiextv1.CustomResourceDefinition) {
		if converted[crd.Spec.Names.Plural] {
			crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ClientConfig:             &apiextv1.WebhookClientConfig{URL: &convertURL, CABundle: c.pki.caPEM()},
				ConversionReviewVersions: []string{"v1"},
			}}
		}
	}); err != nil {
		return err
	}

	config := filepath.Join(c.Dir, "kueue-config.yaml")
	if err := os.WriteFile(config, []byte(managerConfig("config.kueue.x-k8s.io/v1beta2", webhookPort, certDir, probePort)+`manageJobsWithoutQueueName: false
integrations:
  frameworks: ["jobset.x-k8s.io/jobset"]
`), 0o644); err != nil {
		return err
	}
	// Without internal certificate management Kueue reads its metrics server's
	// certificate from the fixed /etc/kueue/metrics/certs (even with metrics off): it
	// runs in bubblewrap with the webhook's certificate mounted there. bwrap leaves the
	// empty mount point folders in the host's /etc.
	bwrap, err := EnsureBubblewrap(ctx, c.opts.Progress)
	if err != nil {
		return err
	}
	c.say("starting Kueue")
	kueue, err := startComponent(c.Logs, "kueue", bwrap, []string{
		"--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", certDir, "/etc/kueue/metrics/certs", "--die-with-parent", "--",
		t.bin, "--config=" + config, "--zap-devel=false",
		// The visibility API server (beta, on by default) needs its own certificate.
		"--feature-gates=VisibilityOnDemand=false", fmt.Sprintf("--visibility-server-port=%d", visibilityPort),
	}, append(cleanEnv(), "KUBECONFIG="+c.Kubeconfig))
	if err != nil {
		return err
	}
	c.components = append(c.components, kueue)
	// Only the webhooks of what this Kueue manages: its own objects and JobSets (a pod
	// webhook for a framework it does not run would refuse every pod).
	keep := func(rules []admissionv1.RuleWithOperations) bool {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				if g != "kueue.x-k8s.io" && g != "jobset.x-k8s.io" {
					return false
				}
			}
		}
		return true
	}
	if err := registerWebhooks(ctx, c.Client, filepath.Join(dir, "config", "components", "webhook", "manifests.yaml"), "kueue-", webhookPort, c.pki.caPEM(), keep); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": "testbed-probe"},
		"spec":     map[string]any{"namespaceSelector": map[string]any{}},
	}}
	if err := poll(ctx, "Kueue webhooks", 250*time.Millisecond, c.components, func(ctx context.Context) error {
		_, err := dyn.Resource(KueueClusterQueues).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}); err != nil {
		return fmt.Errorf("%w\n%s", err, tailFile(filepath.Join(c.Logs, "kueue.log"), 20))
	}
	c.say("Kueue ready in %s", time.Since(began).Round(time.Second))
	return nil
}

// kueueConvertedCRDs returns the plural names of the CRDs that Kueue's CRD
// kustomization gives a conversion webhook (its `- path: patches/webhook_in_X.yaml`
// lines that are not commented out).
func kueueConvertedCRDs(kustomization string) (map[string]bool, error) {
	f, err := os.Open(kustomization)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if name, ok := strings.CutPrefix(line, "- path: patches/webhook_in_"); ok {
			out[strings.TrimSuffix(name, ".yaml")] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no conversion webhook patch", kustomization)
	}
	return out, sc.Err()
}
