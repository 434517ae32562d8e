package recordstore

import (
	"context"
	"errors"
	"path"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// foldJournal applies to r the journal entries it does not hold yet. It
// reports false when an entry vanished: the runner has compacted the
// journal into a newer record, which the caller reads again.
func foldJournal(ctx context.Context, s artifacts.Store, r *record.Run) (bool, error) {
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
		var e record.JournalEntry
		if err := artifacts.GetJSON(ctx, s, o.Key, &e); err != nil {
			if errors.Is(err, artifacts.ErrNotFound) {
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
