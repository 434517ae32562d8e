package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Run statuses.
const (
	StatusPending   = "Pending"
	StatusRunning   = "Running"
	StatusSucceeded = "Succeeded"
	StatusFailed    = "Failed"
	StatusCancelled = "Cancelled"
	StatusSkipped   = "Skipped"
)

// RunKey is the key of a run's record.
func RunKey(id string) string { return id + "/run.json" }

// OutputKey is the key of a step output's data.
func OutputKey(run, step, output string) string { return run + "/" + step + "/" + output }

// LogKey is the key of a step's log.
func LogKey(run, step string) string { return run + "/" + step + "/step.log" }

// Run is the record of one pipeline run, stored as <run-id>/run.json. Its
// JSON fields id, pipeline, status, started, finished and steps are stable.
type Run struct {
	// ID is the run id, also the Argo workflow name of a cluster run.
	ID string `json:"id"`
	// Pipeline is the pipeline's metadata.name.
	Pipeline string `json:"pipeline"`
	// Status is Running, Succeeded, Failed or Cancelled.
	Status string `json:"status"`
	// Started is when the run started.
	Started time.Time `json:"started"`
	// Finished is when the run ended; nil while it runs.
	Finished *time.Time `json:"finished"`
	// Source is the pipeline file the run came from.
	Source string `json:"source,omitempty"`
	// On is where the run ran: local or argo.
	On string `json:"on,omitempty"`
	// Namespace is the namespace of a cluster run's workflow.
	Namespace string `json:"namespace,omitempty"`
	// Params are the run's parameter values.
	Params map[string]string `json:"params"`
	// Schedule names the schedule that started the run, if one did;
	// ScheduledTime is the time it was scheduled for, in RFC 3339 (what
	// its steps read as {{run.scheduledTime}}).
	Schedule      string `json:"schedule,omitempty"`
	ScheduledTime string `json:"scheduledTime,omitempty"`
	// Message explains a failure or cancellation.
	Message string `json:"message,omitempty"`
	// Runner identifies the process running a local run.
	Runner *RunnerInfo `json:"runner,omitempty"`
	// Journal is the last entry of the run's journal that this record
	// holds (see JournalEntry).
	Journal int `json:"journal,omitempty"`
	// Origin says what ran: the pipectl and the checkout the run came
	// from (each step's code and image are in its record).
	Origin *Origin `json:"origin,omitempty"`
	// Steps are the run's steps in the pipeline's order.
	Steps []StepRecord `json:"steps"`
}

// Origin is where a run came from.
type Origin struct {
	// Pipectl is the version of the pipectl that started the run.
	Pipectl string `json:"pipectl"`
	// Git is the git checkout holding the pipeline file, when it is in one.
	Git *GitOrigin `json:"git,omitempty"`
	// ImageTags says a cluster run's images were not pinned to digests
	// (--image-tags): a tag in its steps' images may name another image
	// tomorrow.
	ImageTags bool `json:"imageTags,omitempty"`
	// Pipeline is the pipeline as it ran: its file's folder, packed and
	// stored like a component's code; what `pipectl run --rerun` runs.
	Pipeline *PipelineSource `json:"pipeline,omitempty"`
	// RerunOf is the run this one re-ran (`pipectl run --rerun`).
	RerunOf string `json:"rerunOf,omitempty"`
}

// PipelineSource is a run's pipeline file in a code pack of its folder.
type PipelineSource struct {
	// Pack is the sha256 of the pack (sha256:HEX), stored at
	// .code/HEX.tar; File the pipeline file's path inside it (slashes).
	Pack string `json:"pack"`
	File string `json:"file"`
}

// GitOrigin is the state of the git checkout a run came from.
type GitOrigin struct {
	// Commit is HEAD's commit; Branch its branch ("" when detached).
	Commit string `json:"commit"`
	Branch string `json:"branch,omitempty"`
	// Remote is the URL of the remote "origin", credentials removed.
	Remote string `json:"remote,omitempty"`
	// Dirty says the work tree differed from HEAD (changed or untracked
	// files); DiffSHA256 is then the sha256 of `git diff HEAD --binary`.
	Dirty      bool   `json:"dirty"`
	DiffSHA256 string `json:"diffSha256,omitempty"`
}

// StepRecord is the record of one step of a run.
type StepRecord struct {
	// Name is the step's name.
	Name string `json:"name"`
	// Status is Pending, Running, Succeeded, Failed, Skipped or Cancelled.
	Status string `json:"status"`
	// ExitCode is the exit code of the step's last attempt; nil before it ends.
	ExitCode *int `json:"exitCode"`
	// Cached is true when the step reused an earlier step's outputs.
	Cached bool `json:"cached"`
	// DependsOn names the steps this step waits for (the DAG's edges).
	DependsOn []string `json:"dependsOn,omitempty"`
	// CachedFrom names the run whose outputs were reused.
	CachedFrom string `json:"cachedFrom,omitempty"`
	// Code is the digest of the step's component folder, its code
	// (codepack); Image the image it ran in on a cluster.
	Code  string `json:"code,omitempty"`
	Image string `json:"image,omitempty"`
	// Fingerprint identifies the step's work for caching.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Attempts counts the step's attempts (retries and gang restarts included).
	Attempts int `json:"attempts,omitempty"`
	// Started and Finished bound the step's execution.
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	// Message explains a failure or a skip.
	Message string `json:"message,omitempty"`
	// Outputs are the step's outputs once it succeeded.
	Outputs []OutputRecord `json:"outputs"`
	// Item is the item of a loop iteration (a step named STEP[i]): the
	// JSON value as written in the list.
	Item json.RawMessage `json:"item,omitempty"`
	// GangAttempts are a distributed step's gang attempts that did not
	// succeed (stalled or failed), in order.
	GangAttempts []GangAttempt `json:"gangAttempts,omitempty"`
	// Progress is what a distributed step's ranks reported (PIPECTL_METRICS).
	Progress *Progress `json:"progress,omitempty"`
}

// OutputRecord is one output of a step: an artifact (URI, size, sha256) or a
// parameter (Value).
type OutputRecord struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	URI    string  `json:"uri,omitempty"`
	Size   int64   `json:"size,omitempty"`
	SHA256 string  `json:"sha256,omitempty"`
	Value  *string `json:"value,omitempty"`
}

// CountStatuses says how many steps have each status, by the status:
// "3 succeeded, 1 failed" (in the order succeeded, failed, cancelled,
// skipped, running, pending); "" for none. It summarises a loop step's
// iterations.
func CountStatuses(counts map[string]int) string {
	var parts []string
	for _, st := range []string{StatusSucceeded, StatusFailed, StatusCancelled, StatusSkipped, StatusRunning, StatusPending} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(st)))
		}
	}
	return strings.Join(parts, ", ")
}

// Step returns the record of the named step, or nil.
func (r *Run) Step(name string) *StepRecord {
	for i := range r.Steps {
		if r.Steps[i].Name == name {
			return &r.Steps[i]
		}
	}
	return nil
}

// LatestRun names the newest run wherever a run id is expected.
const LatestRun = "latest"
