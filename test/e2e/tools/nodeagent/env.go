package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// orderedEnv keeps variables in the order they were first set, later values winning.
type orderedEnv struct {
	keys []string
	vals map[string]string
}

func (e *orderedEnv) set(k, v string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *orderedEnv) lookup(k string) (string, bool) { v, ok := e.vals[k]; return v, ok }

func (e *orderedEnv) list() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// containerEnv is the container's environment as the kubelet builds it: the base
// variables (PATH, HOSTNAME, the API server's KUBERNETES_SERVICE_*), the image's ENV (from
// the catalogue or the pulled image's config), then envFrom, then
// env in order with $(VAR) references expanded, secretKeyRef, configMapKeyRef, fieldRef
// and resourceFieldRef resolved.
func (r *runtime) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	var e orderedEnv
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	e.set("PATH", path)
	e.set("HOME", "/root")
	e.set("HOSTNAME", podHostname(pod))
	e.set("KUBERNETES_SERVICE_HOST", r.apiHost)
	e.set("KUBERNETES_SERVICE_PORT", r.apiPort)
	e.set("KUBERNETES_SERVICE_PORT_HTTPS", r.apiPort)
	e.set("KUBERNETES_PORT", "tcp://"+r.apiHost+":"+r.apiPort)
	img, _ := r.imageFor(c.Image)
	for _, kv := range img.Env {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}

	for _, from := range c.EnvFrom {
		data, err := r.envFromData(ctx, pod.Namespace, from)
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			e.set(from.Prefix+k, data[k])
		}
	}
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			e.set(v.Name, expand(v.Value, e.lookup))
			continue
		}
		val, ok, err := r.envValueFrom(ctx, pod, c, v)
		if err != nil {
			return nil, fmt.Errorf("env %s of container %s: %w", v.Name, c.Name, err)
		}
		if ok {
			e.set(v.Name, val)
		}
	}
	return e.list(), nil
}

func (r *runtime) envFromData(ctx context.Context, ns string, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := r.client.CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom configmap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := r.client.CoreV1().Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		out := map[string]string{}
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

// envValueFrom resolves one valueFrom; ok is false for an optional reference that is missing.
func (r *runtime) envValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, v corev1.EnvVar) (string, bool, error) {
	src := v.ValueFrom
	switch {
	case src.FieldRef != nil:
		val, err := fieldValue(pod, r.hosts.podIP(pod), src.FieldRef.FieldPath)
		return val, err == nil, err
	case src.ResourceFieldRef != nil:
		val, err := resourceValue(c, src.ResourceFieldRef)
		return val, err == nil, err
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		s, err := r.client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("secret %s: %w", ref.Name, err)
		}
		b, found := s.Data[ref.Key]
		if !found {
			if optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %s has no key %q", ref.Name, ref.Key)
		}
		return string(b), true, nil
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		optional := ref.Optional != nil && *ref.Optional
		cm, err := r.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("configmap %s: %w", ref.Name, err)
		}
		val, found := cm.Data[ref.Key]
		if !found {
			if b, bin := cm.BinaryData[ref.Key]; bin {
				return string(b), true, nil
			}
			if optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %s has no key %q", ref.Name, ref.Key)
		}
		return val, true, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// fieldValue resolves a downward API field path of the pod, whose address is podIP.
func fieldValue(pod *corev1.Pod, podIP, path string) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return nodeIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// nodeAllocatable is what a container without limits sees, as on a real node.
func nodeAllocatable() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
}

// resourceValue resolves a resourceFieldRef (limits.cpu, requests.memory, ...).
func resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	var q resource.Quantity
	var found bool
	switch kind {
	case "limits":
		q, found = c.Resources.Limits[corev1.ResourceName(name)]
		if !found {
			q, found = nodeAllocatable()[corev1.ResourceName(name)]
		}
	case "requests":
		q, found = c.Resources.Requests[corev1.ResourceName(name)]
		if !found {
			q, found = resource.MustParse("0"), true
		}
	}
	if !found {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	return fmt.Sprint(int64(math.Ceil(q.AsApproximateFloat64() / div.AsApproximateFloat64()))), nil
}

// expand replaces $(VAR) with the variable's value when it is defined; $$ is a literal $.
// Undefined references stay as written, as in Kubernetes.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
