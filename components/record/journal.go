package record

import (
	"fmt"
	"time"
)

// JournalKey is the key of entry seq of run id's journal.
func JournalKey(id string, seq int) string {
	return fmt.Sprintf("%s/journal/%010d.json", id, seq)
}

// JournalEntry is one entry of a run's journal, <run-id>/journal/<seq>.json:
// the records of the steps that changed since the previous entry, whole. A
// local runner writes the run record when the run starts and ends, and an
// entry when steps change in between; a reader applies the entries numbered
// above the record's Journal, in order, to get the run's current state.
type JournalEntry struct {
	// Seq numbers the entry, from 1.
	Seq int `json:"seq"`
	// Steps are the new records of the steps that changed.
	Steps []StepRecord `json:"steps"`
}

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
