package launcher

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// listFunc and watchFunc list and watch one kind of object.
type (
	listFunc  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	watchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
)

// watchLoop lists the objects opts select, then watches them from the
// list's resourceVersion, calling handle for every object listed and every
// event. A watch that closes (the API server ends watches after a while,
// connections drop) is resumed from the last resourceVersion seen; when
// that is too old (410 Gone) or a watch cannot be opened, the objects are
// listed again. It returns when ctx ends.
func watchLoop(ctx context.Context, opts metav1.ListOptions, list listFunc, watchf watchFunc, retry time.Duration, handle func(watch.EventType, runtime.Object)) {
	listed, rv := false, ""
	for ctx.Err() == nil {
		if !listed {
			obj, err := list(ctx, opts)
			if err != nil {
				sleep(ctx, retry)
				continue
			}
			items, err := meta.ExtractList(obj)
			if err != nil {
				sleep(ctx, retry)
				continue
			}
			for _, it := range items {
				handle(watch.Modified, it)
			}
			if acc, err := meta.ListAccessor(obj); err == nil {
				rv = acc.GetResourceVersion()
			}
			listed = true
		}
		o := opts
		o.ResourceVersion, o.AllowWatchBookmarks = rv, true
		w, err := watchf(ctx, o)
		if err != nil {
			listed = false
			sleep(ctx, retry)
			continue
		}
		started := time.Now()
		events := 0
	recv:
		for {
			select {
			case <-ctx.Done():
				break recv
			case ev, ok := <-w.ResultChan():
				if !ok {
					break recv
				}
				switch ev.Type {
				case watch.Error:
					// 410 Gone (the resourceVersion is too old) or
					// another error: list again.
					listed = false
					break recv
				case watch.Bookmark:
				default:
					handle(ev.Type, ev.Object)
				}
				events++
				if acc, err := meta.Accessor(ev.Object); err == nil && acc.GetResourceVersion() != "" {
					rv = acc.GetResourceVersion()
				}
			}
		}
		w.Stop()
		if events == 0 && time.Since(started) < retry {
			// A watch that closes at once: do not spin.
			sleep(ctx, retry)
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
