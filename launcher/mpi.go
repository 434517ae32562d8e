package launcher

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/mpiagent"
)

// createMPISecret creates an mpi step's Secret with a new key pair (one
// per launch: a Secret left by an earlier attempt is replaced).
func (l *Launcher) createMPISecret(ctx context.Context, sec *corev1.Secret) error {
	cert, key, err := mpiagent.Keys(time.Now())
	if err != nil {
		return fmt.Errorf("the MPI key pair: %w", err)
	}
	s := sec.DeepCopy()
	s.Data = maps.Clone(sec.Data)
	s.Data[wire.MPICertKey], s.Data[wire.MPIKeyKey] = cert, key
	api := l.Kube.CoreV1().Secrets(s.Namespace)
	_, err = api.Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		if err = api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, s, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("create Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	l.logf("created Secret %s/%s: the mpi step's hostfile and key pair", s.Namespace, s.Name)
	return nil
}

func (l *Launcher) deleteSecret(ctx context.Context, sec *corev1.Secret) {
	if err := l.Kube.CoreV1().Secrets(sec.Namespace).Delete(ctx, sec.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		l.logf("delete Secret %s/%s: %v", sec.Namespace, sec.Name, err)
	}
}
