package recordstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// FuzzReadRun feeds the run-record reader a run.json and a journal entry
// of run r as a store may hold them after a crash or by someone's hand.
// The reader never panics and ends at once; a record it returns is of its
// folder's run; and one bad record never fails the listing of the runs:
// it is listed when it reads, skipped with a warning when it does not.
// `go test` runs the seeds; `go test -fuzz FuzzReadRun ./pipeline/recordstore` explores.
func FuzzReadRun(f *testing.F) {
	good, _ := json.Marshal(&record.Run{ID: "r", Pipeline: "p", Status: record.StatusSucceeded,
		Steps: []record.StepRecord{{Name: "a", Status: record.StatusSucceeded}}})
	running, _ := json.Marshal(&record.Run{ID: "r", Status: record.StatusRunning, Runner: &record.RunnerInfo{Host: "h", PID: 1},
		Steps: []record.StepRecord{{Name: "a", Status: record.StatusRunning}}})
	entry, _ := json.Marshal(&record.JournalEntry{Seq: 1, Steps: []record.StepRecord{{Name: "a", Status: record.StatusSucceeded}, {Name: "b[0]", Status: record.StatusFailed}}})
	for _, seed := range [][2]string{
		{string(good), ""},
		{string(running), string(entry)},
		{string(running), `{"seq": 1, "steps": [{"name": "a", "status": 7}]}`},
		{string(running), `{"seq": 1, "steps": null}` + "trailing"},
		{`{"id": "../../x", "status": "Succeeded"}`, ""},
		{`{"id": "r", "status": "Succeeded"} {"id": "s"}`, ""},
		{`{"id": "r", "status": "Succeeded", "steps": [{"name": "a", "exitCode": "1"}]}`, ""},
		{`{"id": "r", "status": "Running", "journal": -1}`, `{}`},
		{`{"id": "r", "params": {"a": {"b": 1}}}`, ""},
		{`{"id": "r", "status": "Succeeded", "started": "0001-01-01T00:00n00Z"}`, ""},
		{`{"id": "r", "status": "Running", "started": "2026-01-01T00:00:00Z"}`, `{"seq": 1, "steps": [{"name": "a", "started": "x"}]}`},
		{`{"id": "r"` + strings.Repeat(`, "x": [`, 100) + strings.Repeat("]", 100) + "}", ""},
		{strings.Repeat("[", 20000), ""},
		{`{"id": "r"`, ""},
		{"null", ""},
		{"", ""},
		{"\xff\xfe{}", "\x00"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, runJSON, entryJSON []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := artifacts.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, record.RunKey("r"), bytes.NewReader(runJSON), int64(len(runJSON))); err != nil {
			t.Fatal(err)
		}
		if len(entryJSON) > 0 {
			if err := s.Put(ctx, record.JournalKey("r", 1), bytes.NewReader(entryJSON), int64(len(entryJSON))); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		rec, readErr := ReadRun(ctx, s, "r")
		if took := time.Since(start); errors.Is(readErr, context.DeadlineExceeded) || took > 2*time.Second {
			t.Fatalf("ReadRun took %v: %v", took, readErr)
		}
		if readErr == nil {
			if rec.ID != "r" {
				t.Fatalf("ReadRun(r) returned the record of %q", rec.ID)
			}
			if _, err := json.Marshal(rec); err != nil {
				t.Fatalf("the record read does not marshal: %v", err)
			}
		}
		var warn strings.Builder
		runs, err := ListRuns(ctx, s, &warn)
		if err != nil {
			t.Fatalf("one record (ReadRun: %v) failed the listing: %v", readErr, err)
		}
		if listed := len(runs) == 1; listed != (readErr == nil) || (!listed && !strings.Contains(warn.String(), "warning: skipping run r: ")) {
			t.Fatalf("ReadRun: %v; listed %d run(s), warning %q: want it listed when it reads, else skipped with a warning", readErr, len(runs), warn.String())
		}
	})
}
