package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// workPrefix begins the name of every run's work directory.
const workPrefix = "pipectl-"

// runnerFile, in a run's work directory, names the process running it.
const runnerFile = "runner.json"

// newWorkDir makes the work directory of run id below base and records the
// calling process as its runner.
func newWorkDir(base, id string) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(base, workPrefix+id+"-")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(recordstore.ThisRunner())
	if err == nil {
		err = os.WriteFile(filepath.Join(work, runnerFile), b, 0o644)
	}
	if err != nil {
		os.RemoveAll(work)
		return "", err
	}
	return work, nil
}

// RemoveStaleWork removes the work directories below base whose runner
// died on this host (a run's own watchdog normally removes them; this is
// for when it could not), and returns their paths.
func RemoveStaleWork(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), workPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, runnerFile))
		if err != nil {
			continue
		}
		var ri record.RunnerInfo
		if json.Unmarshal(b, &ri) != nil {
			continue
		}
		if alive, known := recordstore.Alive(&ri); known && !alive {
			if err := os.RemoveAll(dir); err == nil {
				removed = append(removed, dir)
			}
		}
	}
	return removed, nil
}
