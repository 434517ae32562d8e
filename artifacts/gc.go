package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// orphanAge is how old the temporary files of a run directory without a
// run record must be before CollectGarbage removes them: a runner killed
// while it created the record leaves such a directory, and a runner that is
// creating one right now has had it for far less.
const orphanAge = time.Hour

// CollectGarbage cleans up after runs whose runner died (see RunnerInfo
// and HeartbeatKey):
// it records each such run as Failed ("runner died") for good and deletes
// its journal, and it removes the partial uploads of every run that no
// longer runs: temporary files in a local store, incomplete multipart
// uploads in an S3 store. It returns one line per thing it did.
// Runs that may still run (on this host or another) are left alone.
func CollectGarbage(ctx context.Context, s Store) ([]string, error) {
	runs, err := ListRuns(ctx, s, nil)
	if err != nil {
		return nil, err
	}
	var did []string
	var errs []error
	ended := map[string]bool{}
	for _, r := range runs {
		if r.Status == StatusRunning {
			continue
		}
		if r.Message == MessageRunnerDied && storedRunning(ctx, s, r.ID) {
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
		if p, ok := s.(partials); ok {
			d, err := p.removePartial(r)
			did, errs = append(did, d...), append(errs, err)
		}
		ended[r.ID] = true
	}
	if p, ok := s.(partials); ok {
		d, err := p.removeLeftovers(ctx, ended)
		did, errs = append(did, d...), append(errs, err)
	}
	return did, errors.Join(errs...)
}

// partials is a store that knows how its uploads are left half-done.
type partials interface {
	// removePartial removes what run r, which no longer runs, left
	// half-written, and says what it did.
	removePartial(r *Run) ([]string, error)
	// removeLeftovers removes what no run record accounts for, or what
	// the runs that ended left (ended), and says what it did.
	removeLeftovers(ctx context.Context, ended map[string]bool) ([]string, error)
}

// removePartial removes the temporary files of a run whose runner died.
func (l *Local) removePartial(r *Run) ([]string, error) {
	if r.Message != MessageRunnerDied {
		return nil, nil
	}
	n, err := l.removeTemp(r.ID, listedKeys(l, r))
	if n == 0 {
		return nil, err
	}
	return []string{fmt.Sprintf("run %s: removed %d partial upload(s)", r.ID, n)}, err
}

// removeLeftovers removes the run directories a runner killed while it
// created the run's record left.
func (l *Local) removeLeftovers(context.Context, map[string]bool) ([]string, error) {
	return l.removeOrphans(time.Now().Add(-orphanAge))
}

// removePartial does nothing: an S3 upload is whole or not there, and
// the incomplete multipart uploads are removeLeftovers'.
func (s *S3) removePartial(*Run) ([]string, error) { return nil, nil }

// removeLeftovers aborts the incomplete multipart uploads of the runs
// that ended.
func (s *S3) removeLeftovers(ctx context.Context, ended map[string]bool) ([]string, error) {
	if len(ended) == 0 {
		return nil, nil
	}
	aborted, err := s.abortUploads(ctx, ended)
	var did []string
	for _, id := range slices.Sorted(maps.Keys(aborted)) {
		did = append(did, fmt.Sprintf("run %s: aborted %d incomplete multipart upload(s)", id, aborted[id]))
	}
	return did, err
}

// storedRunning reports whether the stored record of run id says Running:
// a run whose runner died reads as Failed, and gc records that once.
func storedRunning(ctx context.Context, s Store, id string) bool {
	var stored Run
	return GetJSON(ctx, s, RunKey(id), &stored) == nil && stored.Status == StatusRunning
}

// removeOrphans removes the top-level directories of the store, named as
// a local run is, that hold nothing but pipectl's temporary files last
// written before cutoff: what a runner killed while it created a run
// record leaves.
func (l *Local) removeOrphans(cutoff time.Time) ([]string, error) {
	tops, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var did []string
	var errs []error
	for _, top := range tops {
		if !top.IsDir() || top.Name()[0] == '.' || !runIDShape.MatchString(top.Name()) {
			continue
		}
		dir := filepath.Join(l.dir, top.Name())
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			continue
		}
		orphan := true
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !e.Type().IsRegular() || !isTemp(e.Name()) || !info.ModTime().Before(cutoff) {
				orphan = false
				break
			}
		}
		if !orphan {
			continue
		}
		for _, e := range entries {
			errs = append(errs, os.Remove(filepath.Join(dir, e.Name())))
		}
		errs = append(errs, os.Remove(dir))
		did = append(did, fmt.Sprintf("run %s: removed %d partial upload(s) of a run record never written", top.Name(), len(entries)))
	}
	return did, errors.Join(errs...)
}

// listedKeys returns the keys of the outputs run r's record lists: what
// gc never touches, whatever the names of the files below them.
func listedKeys(s Store, r *Run) []string {
	var keys []string
	for _, st := range r.Steps {
		for _, o := range st.Outputs {
			if o.URI == "" {
				continue
			}
			if k, err := SplitURI(s, o.URI); err == nil {
				keys = append(keys, strings.TrimSuffix(k, "/"))
			}
		}
	}
	return keys
}

// runIDShape matches the id of a local run (see local.NewRunID): a
// directory of the store that gc may remove whole must be named like one.
var runIDShape = regexp.MustCompile(`-[0-9]{8}-[0-9]{6}-[a-z2-7]{8}$`)

// removeTemp removes the temporary files of pipectl's writers (see
// isTemp) below prefix, the partial uploads of a runner that died, except
// below the keys in keep (outputs its record lists).
func (l *Local) removeTemp(prefix string, keep []string) (int, error) {
	root, err := l.path(prefix)
	if err != nil {
		return 0, err
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(l.dir, p)
		key := filepath.ToSlash(rel)
		for _, k := range keep {
			if key == k || strings.HasPrefix(key, k+"/") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		if d.Type().IsRegular() && isTemp(d.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
