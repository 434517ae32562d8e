package recordstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// A runner killed while it created run.json leaves a run directory with only
// the record's temporary file: gc removes it once it is old, and leaves a
// fresh one (a runner creating its record right now) and real runs alone.
func TestCollectGarbageOrphanRecord(t *testing.T) {
	ctx := context.Background()
	l, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * artifacts.OrphanAge)
	write := func(rel string, mtime time.Time) string {
		p := filepath.Join(l.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const dead = "p-20240101-000000-aaaaaaaa"
	write(dead+"/.tmp-00aa00aa00aa00aa", old)
	fresh := write("p-20240101-000000-bbbbbbbb/.tmp-00bb00bb00bb00bb", time.Now())
	user := write("mine/.tmp-00cc00cc00cc00cc", old)
	write("mine/notes.txt", old)
	// A user's folder holding only an old file named as a temporary file
	// might be, or one holding pipectl's temporary file but not named as
	// a run is: not pipectl's.
	userOnly := write("theirs/.x.tmp-y", old)
	notRun := write("folder/.tmp-00dd00dd00dd00dd", old)

	did, err := CollectGarbage(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(did) != 1 || !strings.Contains(did[0], dead) {
		t.Errorf("CollectGarbage did %q, want one line about %s", did, dead)
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), dead)); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", dead, err)
	}
	for _, p := range []string{fresh, user, userOnly, notRun} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// gc removes only what pipectl's writers leave, recognisably: files named
// by its temporary-name scheme, below a run whose record says its runner
// died, and never below an output the record lists. A published output
// file named like a temporary file, a user's own file and the runs that
// ended well are left alone.
func TestCollectGarbageOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	l, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	old := time.Now().Add(-2 * artifacts.OrphanAge)
	write := func(rel string) string {
		p := filepath.Join(l.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const died, ok = "p-20240101-000000-aaaaaaaa", "p-20240101-000000-bbbbbbbb"
	for _, r := range []*record.Run{
		{ID: died, Status: record.StatusRunning, Runner: &record.RunnerInfo{Host: host, PID: gone.Process.Pid, Start: ThisRunner().Start}, Steps: []record.StepRecord{
			{Name: "a", Status: record.StatusSucceeded, Outputs: []record.OutputRecord{{Name: "model", Type: "Model", URI: l.URI(died + "/a/model")}}},
			{Name: "b", Status: record.StatusRunning},
		}},
		{ID: ok, Status: record.StatusSucceeded},
	} {
		if err := WriteRun(ctx, l, r); err != nil {
			t.Fatal(err)
		}
	}
	partial := write(died + "/b/out/.tmp-0123456789abcdef")
	keep := []string{
		write(died + "/a/model/.weights.tmp-part1"),
		write(died + "/a/model/.tmp-0123456789abcdef"), // a published file: the record lists its output
		write(died + "/notes/.draft.tmp-2024"),
		write(died + "/b/out/.tmp-old"),
		write(ok + "/a/out/.tmp-0123456789abcdef"),
	}
	did, err := CollectGarbage(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("%s (a partial upload of a run whose runner died) left: %v", partial, err)
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	want := "run " + died + ": removed 1 partial upload(s)"
	if !slices.Contains(did, want) {
		t.Errorf("CollectGarbage did %q, want a line %q", did, want)
	}
	objs, err := l.List(ctx, died+"/a/model/", true)
	if err != nil || len(objs) != 1 || objs[0].Key != died+"/a/model/.weights.tmp-part1" {
		t.Errorf("List of the output: %v, %v; want its file .weights.tmp-part1", objs, err)
	}
}
