// Package runview holds the JSON views of run records that scripts and the
// UI rely on: the entries of `pipectl runs ls -o json` and of `pipectl
// artifacts ls -o json`, which the UI's API serves as they are.
package runview

import (
	"fmt"
	"io"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/checkpoint"
)

// Summary is one entry of `pipectl runs ls -o json`; its fields are stable.
type Summary struct {
	ID       string     `json:"id"`
	Pipeline string     `json:"pipeline"`
	Status   string     `json:"status"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished"`
	On       string     `json:"on,omitempty"`
	// Schedule and ScheduledTime say which schedule started the run, for
	// which time (record.Run).
	Schedule      string `json:"schedule,omitempty"`
	ScheduledTime string `json:"scheduledTime,omitempty"`
}

// Summarize returns the `runs ls -o json` entry of r.
func Summarize(r *record.Run) Summary {
	return Summary{ID: r.ID, Pipeline: r.Pipeline, Status: r.Status, Started: r.Started, Finished: r.Finished, On: r.On, Schedule: r.Schedule, ScheduledTime: r.ScheduledTime}
}

// Entry is one element of `pipectl artifacts ls -o json`; its fields are stable.
type Entry struct {
	Step   string `json:"step"`
	Output string `json:"output"`
	Type   string `json:"type"`
	URI    string `json:"uri"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Cached bool   `json:"cached,omitempty"`
	// Checkpoint, set on a step's checkpoint (Output CheckpointOutput), is
	// its generation, files and time.
	Checkpoint *checkpoint.Summary `json:"checkpoint,omitempty"`
}

// Entries returns the `artifacts ls -o json` entries of r: its artifact
// outputs (not its output parameters), step by step.
func Entries(r *record.Run) []Entry {
	out := []Entry{}
	for _, s := range r.Steps {
		for _, o := range s.Outputs {
			if o.URI == "" {
				continue
			}
			out = append(out, Entry{Step: s.Name, Output: o.Name, Type: o.Type, URI: o.URI, Size: o.Size, SHA256: o.SHA256, Cached: s.Cached})
		}
	}
	return out
}

// WriteSummary writes a run's outcome as `pipectl run --on argo` ends with
// it: each step's status and outputs.
func WriteSummary(w io.Writer, rec *record.Run) {
	dur := ""
	if rec.Finished != nil {
		dur = " in " + rec.Finished.Sub(rec.Started).Round(100*time.Millisecond).String()
	}
	fmt.Fprintf(w, "Run %s %s%s\n", rec.ID, rec.Status, dur)
	if rec.Message != "" && rec.Status != record.StatusSucceeded {
		fmt.Fprintf(w, "  %s\n", rec.Message)
	}
	for _, s := range rec.Steps {
		exit := ""
		if s.ExitCode != nil {
			exit = fmt.Sprintf(" (exit %d)", *s.ExitCode)
		}
		cached := ""
		if s.Cached {
			cached = " (cached from " + s.CachedFrom + ")"
		}
		fmt.Fprintf(w, "  %s %s%s%s\n", s.Name, s.Status, exit, cached)
		if s.Status == record.StatusFailed && s.Message != "" {
			fmt.Fprintf(w, "      %s\n", s.Message)
		}
		for _, o := range s.Outputs {
			if o.Value != nil {
				fmt.Fprintf(w, "      %s = %s\n", o.Name, *o.Value)
			} else {
				fmt.Fprintf(w, "      %s → %s (%d bytes)\n", o.Name, o.URI, o.Size)
			}
		}
	}
}

// Bytes is n in binary units: "512 B", "1.5 KiB", "2.0 MiB", ….
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// WriteOutputs reports a step's outputs on w, one line each, after who:
// "who: output NAME = VALUE" for a parameter, "who: output NAME → URI (N
// bytes)" for an artifact.
func WriteOutputs(w io.Writer, who string, records []record.OutputRecord) {
	for _, r := range records {
		if r.Value != nil {
			fmt.Fprintf(w, "%s: output %s = %s\n", who, r.Name, *r.Value)
		} else {
			fmt.Fprintf(w, "%s: output %s → %s (%d bytes)\n", who, r.Name, r.URI, r.Size)
		}
	}
}
