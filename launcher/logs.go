package launcher

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"pipectl.dev/pipectl/launcher/jobset"
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

func (s *session) prefix(node int) string {
	if s.perPod {
		return fmt.Sprintf("[rank %d] ", node)
	}
	return fmt.Sprintf("[node %d] ", node)
}

func (s *session) who(node int) string {
	if s.perPod {
		return fmt.Sprintf("rank %d", node)
	}
	return fmt.Sprintf("node %d", node)
}

// stream copies a rank container's log to Out, line by line with its prefix.
func (s *session) stream(ctx context.Context, rp *rankPod, pod string) {
	defer s.logs.Done()
	defer rp.log.Flush()
	logs := s.l.Logs
	if logs == nil {
		logs = KubeLogs{Client: s.l.Kube}
	}
	// A stream that cannot be opened or breaks is tried again until it has
	// failed for logOutage on end: an API server that restarts answers
	// with refused connections, then for a while with authorization
	// errors until its caches are warm.
	var out io.Writer = rp.log
	if rp.out != nil {
		out = rp.out
		defer rp.out.flush() // before rp.log's
	}
	var failingSince time.Time
	for {
		r, err := logs.Open(ctx, s.ns, pod, jobset.RankContainer)
		if err == nil {
			failingSince = time.Time{}
			_, err = io.Copy(out, r)
			r.Close()
			if err == nil || ctx.Err() != nil {
				return
			}
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if ctx.Err() != nil || time.Since(failingSince) >= s.l.logOutage() {
			s.l.logf("%s: cannot stream the log of pod %s: %v", s.who(rp.node), pod, err)
			return
		}
		sleep(ctx, s.l.retry())
	}
}
