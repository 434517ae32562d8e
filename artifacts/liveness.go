package artifacts

import (
	"context"
	"os"
	"strings"
	"time"
)

// RunnerInfo identifies the process that runs a local run, so that a
// reader on the same host can tell a run whose runner died from one that
// still runs (a reader on another host goes by the run's heartbeat).
type RunnerInfo struct {
	// Host is the runner's host name.
	Host string `json:"host"`
	// PID is the runner's process id.
	PID int `json:"pid"`
	// Start tells the runner from a later process given the same pid: on
	// Linux the boot id and the process's start time in clock ticks, on
	// macOS its start time. Empty where the system cannot tell.
	Start string `json:"start,omitempty"`
}

// ThisRunner describes the calling process.
func ThisRunner() *RunnerInfo {
	host, _ := os.Hostname()
	pid := os.Getpid()
	start, _ := processStart(pid)
	return &RunnerInfo{Host: host, PID: pid, Start: start}
}

// Alive reports whether the runner still runs. known is false when this
// process cannot tell: the runner ran on another host.
func (ri *RunnerInfo) Alive() (alive, known bool) {
	if host, err := os.Hostname(); err != nil || host != ri.Host || ri.PID <= 0 {
		return false, false
	}
	start, running := processStart(ri.PID)
	return running && (ri.Start == "" || start == ri.Start), true
}

// MessageRunnerDied is the message of a run whose runner died before it
// could record the run's end.
const MessageRunnerDied = "runner died"

// HeartbeatKey is the key of run id's heartbeat, an object its runner
// rewrites every HeartbeatInterval while the run runs. It sits with the
// journal, whose entries are numbered: no step's outputs are there (the
// loader refuses a step named journal).
func HeartbeatKey(id string) string { return id + "/journal/heartbeat" }

// HeartbeatInterval is how often a runner rewrites its run's heartbeat.
const HeartbeatInterval = time.Minute

// HeartbeatStale is how long a heartbeat may go unwritten before a reader
// on another host takes the runner for dead: many intervals, so that a
// slow store or clocks a few minutes apart do not kill a live run.
const HeartbeatStale = 10 * time.Minute

// Beat rewrites run id's heartbeat.
func Beat(ctx context.Context, s Store, id string) error {
	return s.Put(ctx, HeartbeatKey(id), strings.NewReader(""), 0)
}

// runnerDied reports whether r is recorded Running but its runner died: on
// this host, the runner's process is gone; from another host, its
// heartbeat is older than HeartbeatStale. A run with no heartbeat (its
// runner has not written one yet) is taken as running.
func runnerDied(ctx context.Context, s Store, r *Run) bool {
	if r.Status != StatusRunning || r.Runner == nil {
		return false
	}
	if alive, known := r.Runner.Alive(); known {
		return !alive
	}
	info, err := s.Stat(ctx, HeartbeatKey(r.ID))
	return err == nil && time.Since(info.Modified) > HeartbeatStale
}

// markRunnerDied records r, whose runner died while it ran, as failed:
// readers show such a run as Failed, not Running forever.
func markRunnerDied(r *Run) {
	r.Status, r.Message = StatusFailed, MessageRunnerDied
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Status == StatusRunning {
			s.Status, s.Message = StatusFailed, MessageRunnerDied
		}
	}
}
