package origin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// ShipPipeline packs the folder of p's file (as a component's code is
// packed, with lim) and stores the pack once: what a rerun of the run runs.
// When a component's folder is outside that folder, the pack is of the
// smallest folder holding them all, if that is inside the git checkout of
// the pipeline's file (never above it: a checkout's files are what the
// user keeps together); else the components outside are not kept and a
// rerun reads them from where they are then.
func ShipPipeline(ctx context.Context, store artifacts.Store, p *pipeline.Pipeline, lim codepack.Options) (*record.PipelineSource, error) {
	file, err := filepath.Abs(p.Source)
	if err != nil {
		return nil, err
	}
	root := packRoot(ctx, p, filepath.Dir(file))
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return nil, err
	}
	if d := stored(ctx, store, p, root); d != "" {
		return &record.PipelineSource{Pack: d, File: filepath.ToSlash(rel)}, nil
	}
	pack, _, err := codepack.Ship(ctx, store, root, lim)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", p.Source, err)
	}
	return &record.PipelineSource{Pack: pack.Digest, File: filepath.ToSlash(rel)}, nil
}

// stored is the digest of the pack of folder root when a component of p
// runs in root and its code pack, made with the same limits
// (Pipeline.StampCode; a cluster run ships it first), is in the store
// already: the folder is then not packed a second time. "" otherwise.
func stored(ctx context.Context, store artifacts.Store, p *pipeline.Pipeline, root string) string {
	for _, s := range p.Steps {
		c := s.Resolved
		if c == nil || c.Code == "" {
			continue
		}
		if d, err := filepath.Abs(c.RunDir()); err != nil || d != root {
			continue
		}
		if _, err := store.Stat(ctx, codepack.Key(c.Code)); err == nil {
			return c.Code
		}
	}
	return ""
}

// packRoot is the folder to pack for a rerun of p, whose file is in dir
// (see ShipPipeline).
func packRoot(ctx context.Context, p *pipeline.Pipeline, dir string) string {
	root := dir
	for _, s := range p.Steps {
		if s.Resolved == nil || s.Resolved.Dir == "" {
			continue
		}
		d, err := filepath.Abs(s.Resolved.Dir)
		if err != nil {
			return dir
		}
		for !within(d, root) {
			root = filepath.Dir(root)
		}
	}
	if root == dir {
		return dir
	}
	top, ok := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	resolved, err := filepath.EvalSymlinks(root) // git names the checkout by its real path
	if !ok || top == "" || err != nil || !within(resolved, top) {
		return dir
	}
	return root
}

// within says whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// Restore unpacks the pipeline that run rec ran into the new folder dir
// and returns its pipeline file there.
func Restore(ctx context.Context, store artifacts.Store, rec *record.Run, dir string) (string, error) {
	var src *record.PipelineSource
	if rec.Origin != nil {
		src = rec.Origin.Pipeline
	}
	if src == nil {
		return "", fmt.Errorf("run %s did not record its pipeline (a run started by an older pipectl, or whose folder could not be packed): run its file again instead", rec.ID)
	}
	name := filepath.FromSlash(src.File)
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("run %s: recorded pipeline file %q: want a path inside its folder", rec.ID, src.File)
	}
	if err := codepack.Fetch(ctx, store, src.Pack, dir, codepack.Defaults); err != nil {
		return "", fmt.Errorf("run %s: its pipeline: %w", rec.ID, err)
	}
	file := filepath.Join(dir, name)
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("run %s: its pipeline's pack has no %s", rec.ID, src.File)
	}
	return file, nil
}

// Rerun is what a rerun of a run takes from it: every parameter as the run
// had it, under the -p overrides given (which win).
func Rerun(rec *record.Run, overrides map[string]string) map[string]string {
	params := make(map[string]string, len(rec.Params)+len(overrides))
	for k, v := range rec.Params {
		params[k] = v
	}
	for k, v := range overrides {
		params[k] = v
	}
	return params
}

// From turns the cache off for step from and every step downstream of it
// (what depends on it, directly or not), so that they run again.
func From(p *pipeline.Pipeline, from string) error {
	if p.Step(from) == nil {
		return fmt.Errorf("--from %s: pipeline %s has no such step (steps: %s)", from, p.Metadata.Name, p.StepNames())
	}
	again := map[string]bool{from: true}
	for changed := true; changed; {
		changed = false
		for _, s := range p.Steps {
			if !again[s.Name] && slices.ContainsFunc(s.Deps(), func(d string) bool { return again[d] }) {
				again[s.Name], changed = true, true
			}
		}
	}
	off := false
	for i := range p.Steps {
		if again[p.Steps[i].Name] {
			p.Steps[i].Cache = &off
		}
	}
	return nil
}

// Rerunning records in org that its run re-runs run of: the git checkout
// it came from and the pipeline's pack are of's (the rerun runs of's
// pipeline, not a checkout's; a rerun of the rerun unpacks the same).
func Rerunning(org *record.Origin, of *record.Run) {
	org.RerunOf = of.ID
	if of.Origin != nil {
		org.Git, org.Pipeline = of.Origin.Git, of.Origin.Pipeline
	}
}

// ResolvedKey is where a run's resolved pipeline is kept: every step's
// plan (package plan) as the run ran it, after nesting and KFP import.
func ResolvedKey(run string) string { return run + "/pipeline.json" }

// Resolved is a run's resolved pipeline, stored at ResolvedKey.
type Resolved struct {
	Pipeline string       `json:"pipeline"`
	Steps    []*plan.Step `json:"steps"`
}

// WriteResolved stores the resolved pipeline of run: the plan of each of
// p's steps (a step that cannot be planned is left out: the run reports it).
func WriteResolved(ctx context.Context, store artifacts.Store, run string, p *pipeline.Pipeline) error {
	r := Resolved{Pipeline: p.Metadata.Name, Steps: []*plan.Step{}}
	for _, s := range p.Steps {
		if sp, err := plan.Build(p, s.Name); err == nil {
			r.Steps = append(r.Steps, sp)
		}
	}
	return artifacts.PutJSON(ctx, store, ResolvedKey(run), r)
}

// ReadResolved reads the resolved pipeline of run.
func ReadResolved(ctx context.Context, store artifacts.Store, run string) (*Resolved, error) {
	var r Resolved
	if err := artifacts.GetJSON(ctx, store, ResolvedKey(run), &r); err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			return nil, fmt.Errorf("run %s has no resolved pipeline (a run started by an older pipectl): %w", run, err)
		}
		return nil, err
	}
	return &r, nil
}
