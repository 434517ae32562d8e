package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func everything() labels.Selector { return labels.Everything() }

// containerLogs serves the pods/log subresource: the container's combined stdout and
// stderr (of the previous attempt with opts.Previous), its last opts.Tail lines, at most
// opts.LimitBytes, and with opts.Follow until the container ends.
func (r *runtime) containerLogs(ctx context.Context, ns, name, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	p, err := r.lookup(ns, name)
	if err != nil {
		return nil, err
	}
	var st *corev1.ContainerStatus
	p.mu.Lock()
	for _, list := range [][]corev1.ContainerStatus{p.init, p.main} {
		for i := range list {
			if list[i].Name == container {
				st = list[i].DeepCopy()
			}
		}
	}
	p.mu.Unlock()
	if st == nil {
		return nil, errdefs.NotFoundf("pod %s/%s has no container %q", ns, name, container)
	}
	attempt := int(st.RestartCount)
	if opts.Previous {
		attempt--
	} else if st.State.Waiting != nil && attempt > 0 && st.LastTerminationState.Terminated != nil {
		attempt-- // waiting to restart: show the attempt that just ended
	}
	if attempt < 0 {
		return nil, errdefs.InvalidInputf("container %q in pod %s/%s has no previous attempt", container, ns, name)
	}
	path := filepath.Join(p.dir, "logs", container, strconv.Itoa(attempt)+".log")
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, errdefs.InvalidInputf("container %q in pod %s/%s has not started", container, ns, name)
	}
	if err != nil {
		return nil, err
	}
	if opts.Tail > 0 {
		if err := seekTail(f, opts.Tail); err != nil {
			f.Close()
			return nil, err
		}
	}
	var rc io.ReadCloser = f
	if opts.Follow {
		running := func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, list := range [][]corev1.ContainerStatus{p.init, p.main} {
				for _, s := range list {
					if s.Name == container {
						return s.RestartCount == int32(attempt) && s.State.Terminated == nil
					}
				}
			}
			return false
		}
		rc = &followReader{ctx: ctx, f: f, running: running}
	}
	if opts.LimitBytes > 0 {
		rc = limitReadCloser{Reader: io.LimitReader(rc, int64(opts.LimitBytes)), Closer: rc}
	}
	return rc, nil
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	start, pos := 0, end
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(b[:pos], '\n')
		if j < 0 {
			start = 0
			break
		}
		pos, start = j, j+1
	}
	_, err = f.Seek(int64(start), io.SeekStart)
	return err
}

// followReader reads a growing log file until the container ended and all was read.
type followReader struct {
	ctx     context.Context
	f       *os.File
	running func() bool
}

func (r *followReader) Read(b []byte) (int, error) {
	for {
		n, err := r.f.Read(b)
		if n > 0 || (err != nil && err != io.EOF) {
			return n, err
		}
		if !r.running() {
			// One more read: the last bytes may have landed after the EOF above.
			n, err := r.f.Read(b)
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		select {
		case <-r.ctx.Done():
			return 0, fmt.Errorf("log stream: %w", r.ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *followReader) Close() error { return r.f.Close() }

type limitReadCloser struct {
	io.Reader
	io.Closer
}
