package recordstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// TestRecordIDMustBeItsFolders: a record whose id is not its folder's
// ("../../x") is corrupt: skipped with a warning by every listing, the
// latest run and gc, which keep working for the other runs.
func TestRecordIDMustBeItsFolders(t *testing.T) {
	ctx := context.Background()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := WriteRun(ctx, s, &record.Run{ID: "good", Status: record.StatusSucceeded, Started: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "bad/run.json", strings.NewReader(`{"id": "../../x", "status": "Succeeded", "started": "2099-01-01T00:00:00Z"}`), -1); err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	runs, err := ListRuns(ctx, s, &warn)
	if err != nil || len(runs) != 1 || runs[0].ID != "good" {
		t.Fatalf("ListRuns = %v, %v; want the good run only", runs, err)
	}
	if !strings.Contains(warn.String(), `warning: skipping run bad: `) || !strings.Contains(warn.String(), `its id is "../../x", not its folder's`) {
		t.Errorf("warning %q", warn.String())
	}
	if r, err := StoredRun(ctx, s, record.LatestRun, nil); err != nil || r.ID != "good" {
		t.Errorf("latest = %v, %v", r, err)
	}
	var ce *artifacts.CorruptError
	if _, err := ReadRun(ctx, s, "bad"); !errors.As(err, &ce) {
		t.Errorf("ReadRun(bad) = %v, want a CorruptError", err)
	}
	did, err := CollectGarbage(ctx, s)
	if err != nil || !strings.Contains(strings.Join(did, "\n"), "skipping run bad") {
		t.Errorf("gc: %q, %v", did, err)
	}
}

// TestRecordOverTheBound: a run.json of a record then 200 MB of zeros is
// refused as corrupt at once, not read.
func TestRecordOverTheBound(t *testing.T) {
	ctx := context.Background()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRun(ctx, s, &record.Run{ID: "big", Status: record.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(s.Dir(), "big", "run.json")
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, info.Size()+200<<20); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = ReadRun(ctx, s, "big")
	var ce *artifacts.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "data after the JSON value") {
		t.Errorf("a record followed by 200 MB of zeros: %v, want it corrupt", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}
