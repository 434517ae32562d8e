package gang

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// echoMetrics echoes the metrics the node's ranks report (their
// PIPECTL_METRICS files in dir) to the pod's log as progress.Report lines
// (see progress.Echo), written to w under mu (the lock of the ranks' line
// writers). The returned stop, which may be called more than once, reads
// the files a last time and says on w how many malformed lines each rank's
// file had.
func echoMetrics(dir string, ranks []int, mu *sync.Mutex, w io.Writer) (stop func()) {
	paths := make(map[int]string, len(ranks))
	for _, r := range ranks {
		paths[r] = filepath.Join(dir, MetricsFile(r))
	}
	stopEcho := progress.Echo(paths, func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(line)
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, r := range stopEcho() {
				mu.Lock()
				fmt.Fprintf(w, wire.RuntimeLinePrefix+"rank %d: skipped %d malformed metric line(s) of %d in %s\n", r.Rank, r.Malformed, r.Lines, MetricsFile(r.Rank))
				mu.Unlock()
			}
		})
	}
}
