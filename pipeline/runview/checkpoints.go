package runview

import (
	"context"
	"fmt"
	"io"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/checkpoint"
)

// CheckpointOutput and CheckpointType name a step's checkpoint among the
// entries of `artifacts ls`: not one of its outputs (no output's name
// begins with "."), and no part of its fingerprint.
const (
	CheckpointOutput = checkpoint.Folder
	CheckpointType   = "Checkpoint"
)

// CheckpointEntries are the `artifacts ls` entries of the latest complete
// checkpoint of each step of r that has one (a distributed step's; a
// reused step has none of its own), with its generation, files and time.
func CheckpointEntries(ctx context.Context, s artifacts.Store, r *record.Run) ([]Entry, error) {
	var out []Entry
	for _, st := range r.Steps {
		if st.Cached {
			continue
		}
		c, err := checkpoint.Latest(ctx, s, r.ID, st.Name)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of step %s: %w", st.Name, err)
		}
		if c != nil {
			out = append(out, Entry{Step: st.Name, Output: CheckpointOutput, Type: CheckpointType, URI: c.URI, Size: c.Size, Checkpoint: c})
		}
	}
	return out, nil
}

// WriteCheckpoints writes the checkpoint entries of entries as a table
// (nothing when there are none).
func WriteCheckpoints(w io.Writer, entries []Entry) {
	header := false
	for _, e := range entries {
		c := e.Checkpoint
		if c == nil {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nSTEP\tCHECKPOINT\tFILES\tSIZE\tCREATED\tURI")
			header = true
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\n", e.Step, c.Generation, c.Files, c.Size, c.Created.UTC().Format(time.DateTime+"Z"), c.URI)
	}
}
