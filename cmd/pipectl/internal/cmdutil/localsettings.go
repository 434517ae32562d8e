package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// LocalSettingsFile is the file of a project's settings for local runs:
// `pipectl run` (without --on) looks for it in the pipeline file's folder
// and each folder above it, and uses the first it finds. `make demo` writes
// one at the top of the repository, naming the folder of the python3 that
// has PyTorch, so that the example runs in the user's own shell as it does
// under make.
const LocalSettingsFile = "pipectl.local.yaml"

// LocalSettings are the settings of local runs a LocalSettingsFile holds.
type LocalSettings struct {
	// File is the settings file they were read from.
	File string `yaml:"-"`
	// Path lists directories put before PATH in the environment of every
	// step of a local run (a relative one is relative to File's folder):
	// a step's program (its command's first word) is looked up there first.
	Path []string `yaml:"path"`
}

// FindLocalSettings reads the LocalSettingsFile in dir or the nearest
// folder above it; it returns nil when there is none.
func FindLocalSettings(dir string) (*LocalSettings, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		file := filepath.Join(dir, LocalSettingsFile)
		data, err := os.ReadFile(file)
		switch {
		case err == nil:
			return parseLocalSettings(file, data)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission):
			return nil, err
		}
		up := filepath.Dir(dir)
		if up == dir {
			return nil, nil
		}
		dir = up
	}
}

func parseLocalSettings(file string, data []byte) (*LocalSettings, error) {
	s := &LocalSettings{File: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	for i, p := range s.Path {
		if p == "" {
			return nil, fmt.Errorf("%s: path[%d] is empty", file, i)
		}
		if !filepath.IsAbs(p) {
			s.Path[i] = filepath.Join(filepath.Dir(file), p)
		}
	}
	return s, nil
}
