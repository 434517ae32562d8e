package launcher

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// streamingLogs gives every pod lines lines and, every tenth line, a
// progress report of its rank, as fast as the launcher reads them.
type streamingLogs struct{ lines int }

func (l streamingLogs) Open(ctx context.Context, _, pod, _ string) (io.ReadCloser, error) {
	r, w := io.Pipe()
	go func() {
		defer w.Close()
		for i := 1; i <= l.lines && ctx.Err() == nil; i++ {
			if _, err := fmt.Fprintf(w, "epoch %d of %s: loss 0.%d\n", i, pod, i); err != nil {
				return
			}
			if i%10 == 0 {
				step := int64(i)
				_, _ = w.Write(progress.Report{Rank: 0, Lines: step, Step: &step, Last: map[string]float64{"loss": 1 / float64(i)}}.Line())
			}
		}
	}()
	return r, nil
}

// BenchmarkRunRanks runs the launcher against a fake API server (in this
// process) for a gang of 8, 64 and 256 rank pods, each streaming 1,000
// lines and 100 progress reports, with the stall watch on, and reports the
// process's CPU time (launcher and fake API together) and the peak heap in
// use while it ran. The real cluster's numbers: BenchmarkLauncherScale in
// test/e2e.
func BenchmarkRunRanks(b *testing.B) {
	for _, pods := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			var cpu time.Duration
			var peak uint64
			for i := 0; i < b.N; i++ {
				c, p := runRanks(b, pods, 1000)
				cpu += c
				peak = max(peak, p)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// runRanks runs one gang of pods rank pods to its end and returns the CPU
// time it took and the peak heap in use.
func runRanks(b *testing.B, pods, lines int) (time.Duration, uint64) {
	f := newFakeCluster(b)
	l := f.launcher()
	last := &lastLines{last: []byte(fmt.Sprintf("epoch %d of ", lines))}
	l.Logs, l.StallTimeout, l.Out = streamingLogs{lines: lines}, time.Minute, last
	js := testJobSet(pods)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	before := cpuTime()
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(b), f.nextPodWatch(b)
	jw.Modify(jobSetWith(js, 0, "", ""))
	for n := 0; n < pods; n++ {
		f.addPod(b, pw, makePod(js.Name, n, 0, corev1.PodRunning))
	}
	// Every rank's log read: the last line of each is out.
	deadline := time.Now().Add(2 * time.Minute)
	for int(last.n.Load()) < pods && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for n := 0; n < pods; n++ {
		f.addPod(b, pw, makePod(js.Name, n, 0, corev1.PodSucceeded))
	}
	jw.Modify(jobSetWith(js, 0, "Completed", ""))
	r := wait(b, done)
	cpu := cpuTime() - before
	close(stop)
	if r.err != nil {
		b.Fatalf("Run: %v\n%s", r.err, f.errs.String())
	}
	return cpu, peak.Load()
}

// lastLines counts the writes holding a rank's last line.
type lastLines struct {
	last []byte
	n    atomic.Int32
}

func (w *lastLines) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.last) {
		w.n.Add(1)
	}
	return len(p), nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
