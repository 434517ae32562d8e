package argorun

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"pipectl.dev/pipectl/pipeline"
)

// CheckSecrets checks, before a run is submitted, that every Secret the
// steps of p read (secrets that are not optional; a name given by a param
// is its value in params; one named by a step's output is named only as
// the run runs) is in namespace ns with the key read: a pod
// whose Secret or key is missing would wait for it, and the run with it,
// until someone looked. A Secret pipectl may not read (forbidden) is left
// for the pods to find, said to warn. No value is read into a message:
// only a Secret's keys.
func CheckSecrets(ctx context.Context, kube kubernetes.Interface, ns string, p *pipeline.Pipeline, params map[string]string, warn func(string)) error {
	found := map[string]*corev1.Secret{}
	warned := false
	var errs []string
	for _, s := range p.Steps {
		for _, sec := range s.Secrets {
			name := sec.Secret
			if sec.Ref().Step != "" {
				continue // named as the run runs
			}
			if prm := sec.Param(); prm != "" {
				name = params[prm]
				if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
					errs = append(errs, fmt.Sprintf("step %s: secret %s: -p %s=%q is not a Secret's name: %s", s.Name, sec.Env, prm, name, strings.Join(msgs, "; ")))
					continue
				}
			}
			if sec.Optional {
				continue
			}
			got, seen := found[name]
			if !seen {
				var err error
				got, err = kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					got = nil
				case apierrors.IsForbidden(err):
					if !warned {
						warn(fmt.Sprintf("Warning: cannot check the steps' Secrets (%v): a step whose Secret or key is missing waits for it", err))
						warned = true
					}
					continue
				case err != nil:
					return fmt.Errorf("step %s: secret %s: Secret %s: %w", s.Name, sec.Env, name, err)
				}
				found[name] = got
			}
			switch {
			case got == nil:
				errs = append(errs, fmt.Sprintf("step %s: secret %s: no Secret %s in namespace %s", s.Name, sec.Env, name, ns))
			case !hasKey(got, sec.Key):
				errs = append(errs, fmt.Sprintf("step %s: secret %s: Secret %s in namespace %s has no key %s (keys: %s)", s.Name, sec.Env, name, ns, sec.Key, keyList(got)))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the steps' Secrets are not there (nothing submitted):\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// hasKey reports whether Secret s (as the API server gives it: its keys
// in Data) has key.
func hasKey(s *corev1.Secret, key string) bool {
	_, ok := s.Data[key]
	return ok
}

// keyList names a Secret's keys, never its values.
func keyList(s *corev1.Secret) string {
	keys := slices.Sorted(maps.Keys(s.Data))
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}
