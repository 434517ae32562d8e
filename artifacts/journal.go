package artifacts

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
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

// foldJournal applies to r the journal entries it does not hold yet. It
// reports false when an entry vanished: the runner has compacted the
// journal into a newer record, which the caller reads again.
func foldJournal(ctx context.Context, s Store, r *Run) (bool, error) {
	objs, err := s.List(ctx, r.ID+"/journal/", false)
	if err != nil {
		return false, err
	}
	index := make(map[string]int, len(r.Steps))
	for i, st := range r.Steps {
		index[st.Name] = i
	}
	for _, o := range objs {
		seq, err := strconv.Atoi(strings.TrimSuffix(path.Base(o.Key), ".json"))
		if o.Dir || err != nil || seq <= r.Journal {
			continue
		}
		var e JournalEntry
		if err := GetJSON(ctx, s, o.Key, &e); err != nil {
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			return false, err
		}
		for _, st := range e.Steps {
			if i, ok := index[st.Name]; ok {
				r.Steps[i] = st
			} else {
				// A step the run added after this record (a loop's iteration).
				index[st.Name] = len(r.Steps)
				r.Steps = append(r.Steps, st)
			}
		}
		r.Journal = seq
	}
	return true, nil
}
