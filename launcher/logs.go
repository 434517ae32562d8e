package launcher

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// LogSource opens the log of a container, following it until the
// container ends.
type LogSource interface {
	Open(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)
}

// KubeLogs is the LogSource of the pods/log API.
type KubeLogs struct {
	Client kubernetes.Interface
}

// Open follows the container's log.
func (k KubeLogs) Open(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	return k.Client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
}
