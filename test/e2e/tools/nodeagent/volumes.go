package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volume is a pod volume as a host folder.
type volume struct {
	hostPath string
	readOnly bool
}

// prepareVolumes makes a host folder for each of the pod's volumes: emptyDir folders, and
// folders filled from configMaps, secrets, the downward API and service-account tokens
// (the projected volume the ServiceAccount admission plugin adds for
// /var/run/secrets/kubernetes.io/serviceaccount). hostPath volumes are used as they are.
func (r *runtime) prepareVolumes(ctx context.Context, p *podRun) (map[string]volume, error) {
	out := map[string]volume{}
	for _, v := range p.pod.Spec.Volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		var err error
		switch {
		case v.EmptyDir != nil:
			err = os.MkdirAll(dir, 0o777)
			out[v.Name] = volume{hostPath: dir}
		case v.HostPath != nil:
			if v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathDirectoryOrCreate {
				err = os.MkdirAll(v.HostPath.Path, 0o755)
			}
			out[v.Name] = volume{hostPath: v.HostPath.Path}
		case v.ConfigMap != nil, v.Secret != nil, v.DownwardAPI != nil, v.Projected != nil:
			err = r.fillVolume(ctx, p.pod, v, dir)
			out[v.Name] = volume{hostPath: dir, readOnly: true}
		default:
			err = fmt.Errorf("volume %s: only emptyDir, hostPath, configMap, secret, downwardAPI and projected volumes are supported", v.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fillVolume writes the files of a configMap, secret, downwardAPI or projected volume.
func (r *runtime) fillVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string) error {
	files := map[string][]byte{}
	var err error
	switch {
	case v.ConfigMap != nil:
		err = r.configMapFiles(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, files)
	case v.Secret != nil:
		err = r.secretFiles(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, files)
	case v.DownwardAPI != nil:
		err = downwardFiles(pod, r.hosts.podIP(pod), v.DownwardAPI.Items, files)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				err = r.configMapFiles(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, files)
			case s.Secret != nil:
				err = r.secretFiles(ctx, pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional, files)
			case s.DownwardAPI != nil:
				err = downwardFiles(pod, r.hosts.podIP(pod), s.DownwardAPI.Items, files)
			case s.ServiceAccountToken != nil:
				var tok string
				tok, err = r.serviceAccountToken(ctx, pod, s.ServiceAccountToken)
				files[s.ServiceAccountToken.Path] = []byte(tok)
			default:
				err = fmt.Errorf("unsupported projected source")
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", v.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if strings.Contains(name, "..") || filepath.IsAbs(name) {
			return fmt.Errorf("volume %s: bad file path %q", v.Name, name)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (r *runtime) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, files map[string][]byte) error {
	cm, err := r.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil
	}
	if err != nil {
		return fmt.Errorf("configmap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return pick("configmap "+name, data, items, files)
}

func (r *runtime) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, files map[string][]byte) error {
	s, err := r.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	return pick("secret "+name, s.Data, items, files)
}

// pick copies all keys, or only items (key → path), into files.
func pick(what string, data map[string][]byte, items []corev1.KeyToPath, files map[string][]byte) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k] = v
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		files[it.Path] = v
	}
	return nil
}

func downwardFiles(pod *corev1.Pod, podIP string, items []corev1.DownwardAPIVolumeFile, files map[string][]byte) error {
	for _, it := range items {
		if it.FieldRef == nil {
			return fmt.Errorf("downwardAPI %s: only fieldRef is supported", it.Path)
		}
		v, err := fieldValue(pod, podIP, it.FieldRef.FieldPath)
		if err != nil {
			return err
		}
		files[it.Path] = []byte(v)
	}
	return nil
}

// serviceAccountToken asks the API server for a token of the pod's service account,
// bound to the pod, as the kubelet does.
func (r *runtime) serviceAccountToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	tr, err := r.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s: %w", sa, err)
	}
	return tr.Status.Token, nil
}
