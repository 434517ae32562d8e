package testbed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"
	"sigs.k8s.io/yaml"
)

// yamlDocs splits a multi-document YAML file.
func yamlDocs(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// crdFiles lists the CRD manifests the test bed installs: JobSet's and every file of
// Argo's manifests/base/crds/full.
func crdFiles(jobsetDir, argoDir string) ([]string, error) {
	var files []string
	for _, glob := range []string{
		filepath.Join(jobsetDir, "config", "components", "crd", "bases", "*.yaml"),
		filepath.Join(argoDir, "manifests", "base", "crds", "full", "*.yaml"),
	} {
		m, err := filepath.Glob(glob)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no CRD manifests match %s", glob)
		}
		sort.Strings(m)
		files = append(files, m...)
	}
	return files, nil
}

// installCRDs creates (or updates) the JobSet and Argo CRDs and waits until each is
// Established.
func installCRDs(ctx context.Context, cfg *rest.Config, jobsetDir, argoDir string, watch []*component) error {
	files, err := crdFiles(jobsetDir, argoDir)
	if err != nil {
		return err
	}
	return applyCRDFiles(ctx, cfg, files, watch, nil)
}

// applyCRDFiles creates (or updates) the CRDs of files, each changed by edit first
// when edit is not nil, and waits until each is Established.
func applyCRDFiles(ctx context.Context, cfg *rest.Config, files []string, watch []*component, edit func(*apiextv1.CustomResourceDefinition)) error {
	cs, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, file := range files {
		docs, err := yamlDocs(file)
		if err != nil {
			return err
		}
		for _, doc := range docs {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if meta.Kind != "CustomResourceDefinition" {
				continue // kustomization.yaml and the like
			}
			var crd apiextv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if edit != nil {
				edit(&crd)
			}
			if err := applyCRD(ctx, cs, &crd); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			names = append(names, crd.Name)
		}
	}
	for _, name := range names {
		if err := poll(ctx, "CRD "+name+" Established", 200*time.Millisecond, watch, func(ctx context.Context) error {
			crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
					return nil
				}
			}
			return errNotYet
		}); err != nil {
			return err
		}
	}
	return nil
}

func applyCRD(ctx context.Context, cs apiextclient.Interface, crd *apiextv1.CustomResourceDefinition) error {
	return apply(ctx, cs.ApiextensionsV1().CustomResourceDefinitions(), crd)
}

// typedClient is the part of a typed client of cluster-scoped objects that
// apply uses.
type typedClient[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// apply creates obj, or replaces the object of its name when one exists.
func apply[T metav1.Object](ctx context.Context, api typedClient[T], obj T) error {
	_, err := api.Create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
		return nil
	}
	old, err := api.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(old.GetResourceVersion())
	if _, err := api.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update %s: %w", obj.GetName(), err)
	}
	return nil
}

// webhookParts are the fields of a mutating or validating webhook that
// loopbackWebhooks reads or sets.
type webhookParts struct {
	clientConfig *admissionv1.WebhookClientConfig
	rules        []admissionv1.RuleWithOperations
	selector     **metav1.LabelSelector
}

// loopbackWebhooks returns the hooks keep accepts (all when keep is nil), each pointed
// at the controller's loopback port with our CA, pod webhooks limited to JobSet pods.
func loopbackWebhooks[W any](hooks []W, port int, caPEM []byte, keep func([]admissionv1.RuleWithOperations) bool, parts func(*W) webhookParts) []W {
	var out []W
	for i := range hooks {
		p := parts(&hooks[i])
		if keep != nil && !keep(p.rules) {
			continue
		}
		*p.clientConfig = admissionv1.WebhookClientConfig{URL: webhookURL(port, *p.clientConfig), CABundle: caPEM}
		if targetsPods(p.rules) {
			*p.selector = jobSetPodSelector()
		}
		out = append(out, hooks[i])
	}
	return out
}

// jobSetPodSelector is the objectSelector JobSet's kustomize patches give its pod webhooks.
func jobSetPodSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: jobsetv1.JobSetNameKey, Operator: metav1.LabelSelectorOpExists},
	}}
}

func targetsPods(rules []admissionv1.RuleWithOperations) bool {
	for _, r := range rules {
		for _, res := range r.Resources {
			if res == "pods" {
				return true
			}
		}
	}
	return false
}

// webhookURL is the loopback URL of one JobSet webhook path.
func webhookURL(port int, cc admissionv1.WebhookClientConfig) *string {
	path := "/"
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	u := fmt.Sprintf("https://127.0.0.1:%d%s", port, path)
	return &u
}

// registerJobSetWebhooks installs JobSet's webhook configurations from the module's
// config/components/webhook/manifests.yaml, each webhook pointed at the controller's
// loopback port by URL with our CA, pod webhooks limited to JobSet pods.
func registerJobSetWebhooks(ctx context.Context, client kubernetes.Interface, jobsetDir string, port int, caPEM []byte) error {
	return registerWebhooks(ctx, client, filepath.Join(jobsetDir, "config", "components", "webhook", "manifests.yaml"), "jobset-", port, caPEM, nil)
}

// registerWebhooks installs the webhook configurations of a controller's manifests
// file, named with prefix, each webhook pointed at the controller's loopback port by
// URL with our CA and pod webhooks limited to JobSet pods; when keep is not nil, only
// the webhooks whose rules it accepts.
func registerWebhooks(ctx context.Context, client kubernetes.Interface, manifests, prefix string, port int, caPEM []byte, keep func([]admissionv1.RuleWithOperations) bool) error {
	docs, err := yamlDocs(manifests)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var wc admissionv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &wc); err != nil {
				return err
			}
			wc.Name = prefix + wc.Name
			wc.Webhooks = loopbackWebhooks(wc.Webhooks, port, caPEM, keep, func(w *admissionv1.MutatingWebhook) webhookParts {
				return webhookParts{&w.ClientConfig, w.Rules, &w.ObjectSelector}
			})
			if err := apply(ctx, client.AdmissionregistrationV1().MutatingWebhookConfigurations(), &wc); err != nil {
				return err
			}
		case "ValidatingWebhookConfiguration":
			var wc admissionv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &wc); err != nil {
				return err
			}
			wc.Name = prefix + wc.Name
			wc.Webhooks = loopbackWebhooks(wc.Webhooks, port, caPEM, keep, func(w *admissionv1.ValidatingWebhook) webhookParts {
				return webhookParts{&w.ClientConfig, w.Rules, &w.ObjectSelector}
			})
			if err := apply(ctx, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(), &wc); err != nil {
				return err
			}
		}
	}
	return nil
}

// jobSetDryRun creates a JobSet with dryRun=All: it passes only when the JobSet webhooks
// answer (failurePolicy is Fail).
func jobSetDryRun(ctx context.Context, cfg *rest.Config) error {
	cs, err := jobsetclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	js := &jobsetv1.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: "testbed-probe", Namespace: "default"},
		Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{{
			Name:     "probe",
			Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "probe", Image: "none", Command: []string{"true"}}},
			}}}},
		}}},
	}
	created, err := cs.JobsetV1alpha2().JobSets("default").Create(ctx, js, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return err
	}
	// The mutating webhook defaults the success policy: proof it ran.
	if created.Spec.SuccessPolicy == nil {
		return fmt.Errorf("jobset mutating webhook did not default the JobSet: %w", errNotYet)
	}
	return nil
}
