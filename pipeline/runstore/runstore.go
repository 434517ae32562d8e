package runstore

import (
	"context"
	"fmt"
	"io"
	"strings"

	"golang.org/x/sync/errgroup"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Latest names the newest run wherever a run id is expected.
const Latest = record.LatestRun

// Reader reads run records from one store, refreshing running cluster runs.
// It is safe for concurrent use.
type Reader struct {
	connect argorun.Connect
	store   artifacts.Store
	warn    io.Writer
}

// New returns a Reader of store's records; connect gives the cluster
// clients (only asked for when a running cluster run is read) and warn
// receives the notes about runs that could not be refreshed (nil:
// discarded).
func New(connect argorun.Connect, store artifacts.Store, warn io.Writer) *Reader {
	if warn == nil {
		warn = io.Discard
	}
	return &Reader{connect: connect, store: store, warn: warn}
}

// Store returns the store the records are read from.
func (r *Reader) Store() artifacts.Store { return r.store }

// Get returns the record of run id, or of the newest run for "latest",
// refreshed when it is a running cluster run. A run that does not exist
// gives an error for which errors.Is(err, artifacts.ErrNotFound) holds.
func (r *Reader) Get(ctx context.Context, id string) (*record.Run, error) {
	rec, err := Stored(ctx, r.store, id, r.warn)
	if err != nil {
		return nil, err
	}
	rec, err = argorun.Refresh(ctx, r.connect, r.store, rec)
	warnStale(r.warn, err)
	return rec, nil
}

// List returns every run, newest first, the running cluster runs refreshed
// at once (within one refresh timeout).
func (r *Reader) List(ctx context.Context) ([]*record.Run, error) {
	runs, err := recordstore.ListRuns(ctx, r.store, r.warn)
	if err != nil {
		return nil, err
	}
	out := make([]*record.Run, len(runs))
	errs := make([]error, len(runs))
	var g errgroup.Group
	g.SetLimit(8)
	for i, run := range runs {
		g.Go(func() error {
			out[i], errs[i] = argorun.Refresh(ctx, r.connect, r.store, run)
			return nil
		})
	}
	_ = g.Wait()
	warnStale(r.warn, errs...)
	return out, nil
}

// ExpandLatest replaces a leading "latest/" of an artifact reference
// (RUN/STEP/OUTPUT[/PATH]) with the newest run's id.
func (r *Reader) ExpandLatest(ctx context.Context, ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, Latest+"/")
	if !ok {
		return ref, nil
	}
	rec, err := Stored(ctx, r.store, Latest, r.warn)
	if err != nil {
		return "", err
	}
	return rec.ID + "/" + rest, nil
}

// Stored returns the record of run id ("latest": the newest run whose
// record is readable; corrupt ones are skipped with a warning to warn) as
// the store has it, without refreshing it (recordstore.StoredRun).
func Stored(ctx context.Context, s artifacts.Store, id string, warn io.Writer) (*record.Run, error) {
	return recordstore.StoredRun(ctx, s, id, warn)
}

// warnStale tells w that runs could not be refreshed from the cluster,
// naming the first reason; it writes nothing when every error is nil.
func warnStale(w io.Writer, errs ...error) {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	switch {
	case n == 1:
		fmt.Fprintf(w, "Note: a running cluster run shows its last recorded status: %v\n", first)
	case n > 1:
		fmt.Fprintf(w, "Note: %d running cluster runs show their last recorded status: %v\n", n, first)
	}
}
