package argorun

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/record"
)

// PodLog returns the log so far of step's pod in the workflow of the
// cluster run rec: its main container's lines (Argo's executor lines left
// out), at most limit bytes from the start. It is how a step's log is read
// while it runs, before `pipectl exec` (or, for a distributed step, the
// follower) stores it. ok is false when there is nothing to read: a run
// not on the cluster, a step without a pod, or a pod whose container has
// not started.
func PodLog(ctx context.Context, connect Connect, rec *record.Run, step string, limit int64) (log []byte, ok bool, err error) {
	if rec.On != On {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	kc, ns, wf, err := findWorkflow(ctx, connect, rec)
	if err != nil {
		return nil, false, err
	}
	node := stepNodes(wf, []string{step})[step]
	if node == nil {
		return nil, false, nil
	}
	pods := kc.Kube.CoreV1().Pods(ns)
	pod, err := nodePod(ctx, pods, rec.ID, node.ID)
	if err != nil {
		return nil, false, err
	}
	if pod == nil || !started(pod) {
		return nil, false, nil
	}
	rc, err := pods.GetLogs(pod.Name, &corev1.PodLogOptions{Container: mainContainer, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	var out bytes.Buffer
	r := bufio.NewReader(io.LimitReader(rc, limit))
	for {
		line, err := r.ReadString('\n')
		// A last line without its newline is still being written: shown
		// unless it may become an executor line.
		if err == nil && !ExecutorLine(line) || err == io.EOF && !strings.HasPrefix(line, `time="`) {
			out.WriteString(line)
		}
		if err == io.EOF {
			return out.Bytes(), true, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}
