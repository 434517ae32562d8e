package recordstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

func statuses(r *record.Run) []string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Name+"="+s.Status)
	}
	return append(out, "run="+r.Status)
}

// TestReadRunJournal: a reader applies the journal entries a record does
// not hold yet, in order, and none that it holds.
func TestReadRunJournal(t *testing.T) {
	ctx := context.Background()
	running := &record.Run{ID: "r1", Status: record.StatusRunning, Runner: ThisRunner(), Steps: []record.StepRecord{{Name: "a", Status: record.StatusPending}, {Name: "b", Status: record.StatusPending}}}
	entries := []record.JournalEntry{
		{Seq: 1, Steps: []record.StepRecord{{Name: "a", Status: record.StatusRunning}}},
		{Seq: 2, Steps: []record.StepRecord{{Name: "a", Status: record.StatusSucceeded}, {Name: "b", Status: record.StatusRunning}}},
	}
	final := &record.Run{ID: "r1", Status: record.StatusSucceeded, Journal: 2, Steps: []record.StepRecord{{Name: "a", Status: record.StatusSucceeded}, {Name: "b", Status: record.StatusSucceeded}}}
	for _, tc := range []struct {
		name   string
		record *record.Run
		want   []string
	}{
		{"running", running, []string{"a=Succeeded", "b=Running", "run=Running"}},
		{"compacted", final, []string{"a=Succeeded", "b=Succeeded", "run=Succeeded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := artifacts.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if err := artifacts.PutJSON(ctx, s, record.JournalKey("r1", e.Seq), e); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteRun(ctx, s, tc.record); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRun(ctx, s, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, statuses(got)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadRunRunnerDied: a run recorded Running whose runner no longer
// runs on this host reads as Failed, "runner died"; so does one on another
// host whose heartbeat is stale. A live runner's run, or one on another host
// with a fresh heartbeat or none yet, reads as Running.
func TestReadRunRunnerDied(t *testing.T) {
	ctx := context.Background()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	me := ThisRunner()
	elsewhere := &record.RunnerInfo{Host: host + "-elsewhere", PID: gone.Process.Pid}
	for _, tc := range []struct {
		name   string
		runner *record.RunnerInfo
		beat   time.Duration // the heartbeat's age; 0: none
		want   []string
	}{
		{"dead", &record.RunnerInfo{Host: host, PID: gone.Process.Pid, Start: me.Start}, 0, []string{"a=Succeeded", "b=Failed", "run=Failed"}},
		{"pid reused", &record.RunnerInfo{Host: host, PID: me.PID, Start: me.Start + "0"}, 0, []string{"a=Succeeded", "b=Failed", "run=Failed"}},
		{"alive", me, 0, []string{"a=Succeeded", "b=Running", "run=Running"}},
		{"other host, no heartbeat", elsewhere, 0, []string{"a=Succeeded", "b=Running", "run=Running"}},
		{"other host, heartbeat", elsewhere, record.HeartbeatInterval, []string{"a=Succeeded", "b=Running", "run=Running"}},
		{"other host, stale heartbeat", elsewhere, record.HeartbeatStale + time.Minute, []string{"a=Succeeded", "b=Failed", "run=Failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := artifacts.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			r := &record.Run{ID: "r1", Status: record.StatusRunning, Runner: tc.runner, Steps: []record.StepRecord{{Name: "a", Status: record.StatusSucceeded}, {Name: "b", Status: record.StatusRunning}}}
			if err := WriteRun(ctx, s, r); err != nil {
				t.Fatal(err)
			}
			if tc.beat > 0 {
				if err := Beat(ctx, s, "r1"); err != nil {
					t.Fatal(err)
				}
				then := time.Now().Add(-tc.beat)
				if err := os.Chtimes(filepath.Join(s.Dir(), "r1", "journal", "heartbeat"), then, then); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadRun(ctx, s, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, statuses(got)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if got.Status == record.StatusFailed && got.Message != record.MessageRunnerDied {
				t.Errorf("message %q, want %q", got.Message, record.MessageRunnerDied)
			}
			runs, err := ListRuns(ctx, s, nil)
			if err != nil || len(runs) != 1 || runs[0].Status != got.Status {
				t.Errorf("ListRuns: %v, %v; want the status ReadRun gives", runs, err)
			}
		})
	}
}

// TestReadRunUnreadableJournalEntry: a journal entry that lists but cannot
// be read (a file that vanished, a link) makes ReadRun fail with a CorruptError after a
// few reads, and ListRuns leave that run out, instead of reading it again
// for ever at a full core.
func TestReadRunUnreadableJournalEntry(t *testing.T) {
	ctx := context.Background()
	l, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := ghostEntry{l}
	r := &record.Run{ID: "r1", Status: record.StatusRunning, Runner: ThisRunner(), Steps: []record.StepRecord{{Name: "a", Status: record.StatusRunning}}}
	if err := WriteRun(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	type result struct {
		runs []*record.Run
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, err := ReadRun(ctx, s, "r1")
		var ce *artifacts.CorruptError
		if !errors.As(err, &ce) {
			done <- result{err: fmt.Errorf("ReadRun: %v, want a CorruptError", err)}
			return
		}
		runs, err := ListRuns(ctx, s, io.Discard)
		done <- result{runs, err}
	}()
	select {
	case res := <-done:
		if res.err != nil || len(res.runs) != 0 {
			t.Errorf("ListRuns: %v, %v; want no run and no error", res.runs, res.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ReadRun still reading after a minute")
	}
}

// ghostEntry is a store whose listing of a journal holds an entry that
// cannot be read.
type ghostEntry struct{ *artifacts.Local }

func (g ghostEntry) List(ctx context.Context, prefix string, recursive bool) ([]artifacts.ObjectInfo, error) {
	objs, err := g.Local.List(ctx, prefix, recursive)
	if strings.HasSuffix(prefix, "/journal/") {
		objs = append(objs, artifacts.ObjectInfo{Key: prefix + "0000000001.json"})
	}
	return objs, err
}
