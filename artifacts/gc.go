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

// OrphanAge is how old the temporary files of a run directory without a
// run record must be before gc removes them: a runner killed
// while it created the record leaves such a directory, and a runner that is
// creating one right now has had it for far less.
const OrphanAge = time.Hour

// Janitor is a store that knows how its writers leave uploads half done;
// gc (package recordstore) asks it to clean up after the runs that no
// longer run.
type Janitor interface {
	// RemovePartial removes what the writers of run left half-written
	// below it, except below the keys in keep (the outputs its record
	// lists), and says what it did.
	RemovePartial(run string, keep []string) ([]string, error)
	// RemoveLeftovers removes what no run record accounts for, or what
	// the runs that ended left (ended), and says what it did.
	RemoveLeftovers(ctx context.Context, ended map[string]bool) ([]string, error)
}

// RemovePartial removes the temporary files of a run whose runner died.
func (l *Local) RemovePartial(run string, keep []string) ([]string, error) {
	n, err := l.removeTemp(run, keep)
	if n == 0 {
		return nil, err
	}
	return []string{fmt.Sprintf("run %s: removed %d partial upload(s)", run, n)}, err
}

// RemoveLeftovers removes the run directories a runner killed while it
// created the run's record left.
func (l *Local) RemoveLeftovers(context.Context, map[string]bool) ([]string, error) {
	return l.removeOrphans(time.Now().Add(-OrphanAge))
}

// RemovePartial does nothing: an S3 upload is whole or not there, and
// the incomplete multipart uploads are RemoveLeftovers'.
func (s *S3) RemovePartial(string, []string) ([]string, error) { return nil, nil }

// RemoveLeftovers aborts the incomplete multipart uploads of the runs
// that ended.
func (s *S3) RemoveLeftovers(ctx context.Context, ended map[string]bool) ([]string, error) {
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

// removeOrphans removes the top-level directories of the store, named as
// a local run is, that hold nothing but pipectl's temporary files last
// written before cutoff: what a runner killed while it created a run
// record leaves.
func (l *Local) removeOrphans(cutoff time.Time) ([]string, error) {
	tops, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // an empty store, never written
	} else if err != nil {
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
