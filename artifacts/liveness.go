package artifacts

import "os"

// RunnerInfo identifies the process that runs a local run, so that a
// reader on the same host can tell a run whose runner died from one that
// still runs.
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

// runnerDied reports whether r is recorded Running but its runner died.
func runnerDied(r *Run) bool {
	if r.Status != StatusRunning || r.Runner == nil {
		return false
	}
	alive, known := r.Runner.Alive()
	return known && !alive
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
