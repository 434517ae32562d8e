package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CollectGarbage cleans up after runs whose runner died (see RunnerInfo):
// it records each such run as Failed ("runner died") for good and deletes
// its journal, and it removes the temporary objects (partial uploads) of
// every run that no longer runs. It returns one line per thing it did.
// Runs that may still run (on this host or another) are left alone.
func CollectGarbage(ctx context.Context, s Store) ([]string, error) {
	runs, err := ListRuns(ctx, s, nil)
	if err != nil {
		return nil, err
	}
	var did []string
	var errs []error
	for _, r := range runs {
		if r.Status == StatusRunning {
			continue
		}
		if r.Message == MessageRunnerDied {
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
		if l, ok := s.(*Local); ok {
			n, err := l.removeTemp(r.ID)
			if err != nil {
				errs = append(errs, err)
			}
			if n > 0 {
				did = append(did, fmt.Sprintf("run %s: removed %d partial upload(s)", r.ID, n))
			}
		}
	}
	return did, errors.Join(errs...)
}

// removeTemp removes Put's temporary files below prefix: the partial
// uploads of a writer that died.
func (l *Local) removeTemp(prefix string) (int, error) {
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
		if !d.IsDir() && isTemp(d.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
