package recordstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pipectl.dev/pipectl/artifacts"
)

// Ref is a resolved reference to a stored output, or to one file of a
// directory output.
type Ref struct {
	// Key is the output's key.
	Key string
	// Meta is the output's metadata.
	Meta artifacts.Metadata
	// File is a path inside a directory output, or "".
	File string
}

// Resolve finds the output a user names: a URI in the store, or
// RUN/STEP/OUTPUT, optionally followed by /PATH inside a directory output.
// An output a run reused from the cache is found through the run record.
func Resolve(ctx context.Context, s artifacts.Store, ref string) (Ref, error) {
	key := ref
	if strings.Contains(ref, "://") {
		k, err := artifacts.SplitURI(s, ref)
		if err != nil {
			return Ref{}, fmt.Errorf("%w (select the store with --artifacts)", err)
		}
		key = k
	}
	key = strings.Trim(key, "/")
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return Ref{}, fmt.Errorf("%q: expected RUN/STEP/OUTPUT or an artifact URI", ref)
	}
	outKey := strings.Join(parts[:3], "/")
	file := strings.Join(parts[3:], "/")
	meta, err := artifacts.ReadMetadata(ctx, s, outKey)
	if errors.Is(err, artifacts.ErrNotFound) {
		// A cached step's outputs live in the run that produced them.
		if run, rerr := ReadRun(ctx, s, parts[0]); rerr == nil {
			if st := run.Step(parts[1]); st != nil {
				for _, o := range st.Outputs {
					if o.Name == parts[2] && o.URI != "" && o.URI != s.URI(outKey) {
						k, serr := artifacts.SplitURI(s, o.URI)
						if serr == nil {
							outKey = k
							meta, err = artifacts.ReadMetadata(ctx, s, outKey)
						}
					}
				}
			}
		}
	}
	if err != nil {
		return Ref{}, err
	}
	r := Ref{Key: outKey, Meta: meta, File: file}
	if file != "" {
		if meta.Kind != artifacts.KindDirectory {
			return Ref{}, fmt.Errorf("%s is a file output: it has no %q inside", s.URI(outKey), file)
		}
		if _, ok := r.Entry(); !ok {
			return Ref{}, fmt.Errorf("directory output %s has no file %q", s.URI(outKey), file)
		}
	}
	return r, nil
}

// Entry returns the directory entry a Ref with File names.
func (r Ref) Entry() (artifacts.FileEntry, bool) {
	for _, e := range r.Meta.Files {
		if e.Path == r.File {
			return e, true
		}
	}
	return artifacts.FileEntry{}, false
}
