package recordstore

import (
	"context"
	"os"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// ThisRunner describes the calling process.
func ThisRunner() *record.RunnerInfo {
	host, _ := os.Hostname()
	pid := os.Getpid()
	start, _ := processStart(pid)
	return &record.RunnerInfo{Host: host, PID: pid, Start: start}
}

// Alive reports whether runner ri still runs. known is false when this
// process cannot tell: the runner ran on another host.
func Alive(ri *record.RunnerInfo) (alive, known bool) {
	if host, err := os.Hostname(); err != nil || host != ri.Host || ri.PID <= 0 {
		return false, false
	}
	start, running := processStart(ri.PID)
	return running && (ri.Start == "" || start == ri.Start), true
}

// Beat rewrites run id's heartbeat.
func Beat(ctx context.Context, s artifacts.Store, id string) error {
	return s.Put(ctx, record.HeartbeatKey(id), strings.NewReader(""), 0)
}

// runnerDied reports whether r is recorded Running but its runner died: on
// this host, the runner's process is gone; from another host, its
// heartbeat is older than HeartbeatStale. A run with no heartbeat (its
// runner has not written one yet) is taken as running.
func runnerDied(ctx context.Context, s artifacts.Store, r *record.Run) bool {
	if r.Status != record.StatusRunning || r.Runner == nil {
		return false
	}
	if alive, known := Alive(r.Runner); known {
		return !alive
	}
	info, err := s.Stat(ctx, record.HeartbeatKey(r.ID))
	return err == nil && time.Since(info.Modified) > record.HeartbeatStale
}

// markRunnerDied records r, whose runner died while it ran, as failed:
// readers show such a run as Failed, not Running forever.
func markRunnerDied(r *record.Run) {
	r.Status, r.Message = record.StatusFailed, record.MessageRunnerDied
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Status == record.StatusRunning {
			s.Status, s.Message = record.StatusFailed, record.MessageRunnerDied
		}
	}
}
