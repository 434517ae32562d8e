package recordstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// CollectGarbage cleans up after runs whose runner died (see RunnerInfo
// and HeartbeatKey):
// it records each such run as Failed ("runner died") for good and deletes
// its journal, and it removes the partial uploads of every run that no
// longer runs: temporary files in a local store, incomplete multipart
// uploads in an S3 store. It returns one line per thing it did.
// Runs that may still run (on this host or another) are left alone.
func CollectGarbage(ctx context.Context, s artifacts.Store) ([]string, error) {
	var warn strings.Builder
	runs, err := ListRuns(ctx, s, &warn)
	if err != nil {
		return nil, err
	}
	// A corrupt record is skipped, and said so.
	did := strings.Split(strings.TrimSuffix(warn.String(), "\n"), "\n")
	if warn.Len() == 0 {
		did = nil
	}
	var errs []error
	ended := map[string]bool{}
	for _, r := range runs {
		if r.Status == record.StatusRunning {
			continue
		}
		if r.Message == record.MessageRunnerDied && storedRunning(ctx, s, r.ID) {
			if err := WriteRun(ctx, s, r); err != nil {
				errs = append(errs, err)
				continue
			}
			entries, err := s.List(ctx, r.ID+"/journal/", true)
			for _, e := range entries {
				err = errors.Join(err, s.Delete(ctx, e.Key))
			}
			if err != nil {
				errs = append(errs, err)
			}
			did = append(did, fmt.Sprintf("run %s: recorded as Failed (runner died)", r.ID))
		}
		if j, ok := s.(artifacts.Janitor); ok && r.Message == record.MessageRunnerDied {
			d, err := j.RemovePartial(r.ID, listedKeys(s, r))
			did, errs = append(did, d...), append(errs, err)
		}
		ended[r.ID] = true
	}
	if j, ok := s.(artifacts.Janitor); ok {
		d, err := j.RemoveLeftovers(ctx, ended)
		did, errs = append(did, d...), append(errs, err)
	}
	return did, errors.Join(errs...)
}

// storedRunning reports whether the stored record of run id says Running:
// a run whose runner died reads as Failed, and gc records that once.
func storedRunning(ctx context.Context, s artifacts.Store, id string) bool {
	var stored record.Run
	return artifacts.GetJSON(ctx, s, record.RunKey(id), &stored) == nil && stored.Status == record.StatusRunning
}

// listedKeys returns the keys of the outputs run r's record lists: what
// gc never touches, whatever the names of the files below them.
func listedKeys(s artifacts.Store, r *record.Run) []string {
	var keys []string
	for _, st := range r.Steps {
		for _, o := range st.Outputs {
			if o.URI == "" {
				continue
			}
			if k, err := artifacts.SplitURI(s, o.URI); err == nil {
				keys = append(keys, strings.TrimSuffix(k, "/"))
			}
		}
	}
	return keys
}
