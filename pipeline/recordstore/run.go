package recordstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// WriteRun stores the run record.
func WriteRun(ctx context.Context, s artifacts.Store, r *record.Run) error {
	return artifacts.PutJSON(ctx, s, record.RunKey(r.ID), r)
}

// CreateRun stores the first record of a run, exclusively: when the store
// holds a run of that id already, it fails with an error for which
// errors.Is(err, fs.ErrExist) holds and leaves that run alone.
func CreateRun(ctx context.Context, s artifacts.Store, r *record.Run) error {
	b, err := artifacts.MarshalShallow(r)
	if err != nil {
		return err
	}
	return s.Create(ctx, record.RunKey(r.ID), bytes.NewReader(b), int64(len(b)))
}

// readRunAttempts bounds how often ReadRun reads a record again because
// its journal changed while it read: a runner compacts its journal once, at
// the end of the run, so a second read normally finds the run ended.
const readRunAttempts = 5

// ReadRun reads the record of run id: while the run runs, with the entries
// of its journal applied; a run whose runner died shows as Failed.
func ReadRun(ctx context.Context, s artifacts.Store, id string) (*record.Run, error) {
	if id == "" || strings.ContainsAny(id, "/\\") || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("invalid run id %q", id)
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if attempt > readRunAttempts {
			// A journal entry that lists but cannot be read (a dangling
			// link, a file removed by hand) is not a compaction: reading
			// again would find it again, for ever.
			return nil, &artifacts.CorruptError{URI: s.URI(record.RunKey(id)), Err: fmt.Errorf("its journal changed under %d reads in a row (an entry is listed but cannot be read)", readRunAttempts)}
		}
		var r record.Run
		if err := artifacts.GetJSON(ctx, s, record.RunKey(id), &r); err != nil {
			if errors.Is(err, artifacts.ErrNotFound) {
				return nil, fmt.Errorf("no run %q in %s: %w", id, s.Root(), artifacts.ErrNotFound)
			}
			return nil, err
		}
		if r.ID != id {
			// A record must be of its folder's run: an id such as
			// "../../x" would name other objects of the store.
			return nil, &artifacts.CorruptError{URI: s.URI(record.RunKey(id)), Err: fmt.Errorf("its id is %q, not its folder's", short(r.ID))}
		}
		if r.Status != record.StatusRunning {
			return &r, nil
		}
		current, err := foldJournal(ctx, s, &r)
		if err != nil {
			return nil, err
		}
		if !current {
			continue
		}
		if runnerDied(ctx, s, &r) {
			// Unless it ended between the two reads.
			var again record.Run
			if err := artifacts.GetJSON(ctx, s, record.RunKey(id), &again); err == nil && again.Status != record.StatusRunning {
				continue
			}
			markRunnerDied(&r)
		}
		return &r, nil
	}
}

// ListRuns returns every run record in the store, newest first. A record
// that is corrupt (see CorruptError; a crash can truncate one) is left out,
// with one line saying so written to warn when it is not nil, so that one
// bad record does not hide every other run.
func ListRuns(ctx context.Context, s artifacts.Store, warn io.Writer) ([]*record.Run, error) {
	dirs, err := s.List(ctx, "", false)
	if err != nil {
		return nil, err
	}
	var runs []*record.Run
	for _, d := range dirs {
		if !d.Dir || strings.HasPrefix(d.Key, ".") {
			continue
		}
		r, err := ReadRun(ctx, s, strings.TrimSuffix(d.Key, "/"))
		var ce *artifacts.CorruptError
		switch {
		case errors.Is(err, artifacts.ErrNotFound):
			continue
		case errors.As(err, &ce) || errors.Is(err, artifacts.ErrNotRegular):
			if warn != nil {
				fmt.Fprintf(warn, "warning: skipping run %s: %v\n", strings.TrimSuffix(d.Key, "/"), err)
			}
			continue
		case err != nil:
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.After(runs[j].Started)
		}
		return runs[i].ID > runs[j].ID
	})
	return runs, nil
}

// StoredRun returns the record of run id (LatestRun: the newest run whose
// record is readable; corrupt ones are skipped with a warning to warn) as
// the store has it.
func StoredRun(ctx context.Context, s artifacts.Store, id string, warn io.Writer) (*record.Run, error) {
	if id != record.LatestRun {
		return ReadRun(ctx, s, id)
	}
	runs, err := ListRuns(ctx, s, warn)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs in %s: %w", s.Root(), artifacts.ErrNotFound)
	}
	return runs[0], nil
}

// short is an id for a message: its first 100 bytes.
func short(id string) string {
	if len(id) > 100 {
		return id[:100] + "…"
	}
	return id
}
