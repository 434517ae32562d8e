// Package runview holds the JSON views of run records that scripts and the
// UI rely on: the entries of `pipectl runs ls -o json` and of `pipectl
// artifacts ls -o json`, which the UI's API serves as they are.
package runview

import (
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// Summary is one entry of `pipectl runs ls -o json`; its fields are stable.
type Summary struct {
	ID       string     `json:"id"`
	Pipeline string     `json:"pipeline"`
	Status   string     `json:"status"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished"`
	On       string     `json:"on,omitempty"`
}

// Summarize returns the `runs ls -o json` entry of r.
func Summarize(r *artifacts.Run) Summary {
	return Summary{ID: r.ID, Pipeline: r.Pipeline, Status: r.Status, Started: r.Started, Finished: r.Finished, On: r.On}
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
}

// Entries returns the `artifacts ls -o json` entries of r: its artifact
// outputs (not its output parameters), step by step.
func Entries(r *artifacts.Run) []Entry {
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
