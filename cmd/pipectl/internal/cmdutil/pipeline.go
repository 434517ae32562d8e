package cmdutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/trainer"
)

// Loaded is the pipeline a run runs (LoadRun).
type Loaded struct {
	Pipeline *pipeline.Pipeline
	// Overrides are the -p overrides in effect (with --rerun, every
	// parameter of the run re-run), Values every parameter's value.
	Overrides, Values map[string]string
	// Rerun is the run re-run (--rerun), nil otherwise; Source the
	// pipeline file as the new run's record names it (the re-run one's).
	Rerun  *record.Run
	Source string
	// Cleanup removes the folder a re-run pipeline was unpacked into.
	Cleanup func()
}

// LoadRun loads the pipeline to run: file, or with rerun (a run id or
// "latest") the pipeline that run ran, unpacked from the store into a
// temporary folder, with its parameters under the -p overrides; from,
// when set, runs that step and everything downstream of it again.
func LoadRun(ctx context.Context, f *Factory, file string, params []string, rerun, from string) (*Loaded, error) {
	l := &Loaded{Cleanup: func() {}, Source: file}
	var err error
	if l.Overrides, err = pipeline.ParseOverrides(params); err != nil {
		return nil, podutil.FlagErrorf("%v", err)
	}
	if rerun != "" {
		if file, l.Rerun, l.Cleanup, err = restore(ctx, f, rerun); err != nil {
			return nil, err
		}
		l.Overrides, l.Source = origin.Rerun(l.Rerun, l.Overrides), l.Rerun.Source
	}
	if l.Pipeline, err = f.Load(file); err == nil {
		l.Values, err = l.Pipeline.ResolveParams(l.Overrides)
	}
	if err == nil && from != "" {
		if err = origin.From(l.Pipeline, from); err != nil {
			err = podutil.FlagErrorf("%v", err)
		}
	}
	if err != nil {
		l.Cleanup()
		return nil, err
	}
	return l, nil
}

// Origin is where the run comes from (origin.Of), for a rerun the run
// it re-runs.
func (l *Loaded) Origin(ctx context.Context, f *Factory) *record.Origin {
	org := origin.Of(ctx, l.Pipeline, f.FullVersion())
	if l.Rerun != nil {
		origin.Rerunning(org, l.Rerun)
	}
	return org
}

// restore unpacks the pipeline of run id into a temporary folder.
func restore(ctx context.Context, f *Factory, id string) (file string, rec *record.Run, cleanup func(), err error) {
	reader, err := f.Runs(ctx, f.IOStreams.ErrOut)
	if err != nil {
		return "", nil, nil, err
	}
	if rec, err = reader.Get(ctx, id); err != nil {
		return "", nil, nil, err
	}
	store, err := f.Store(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "pipectl-rerun-")
	if err != nil {
		return "", nil, nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if file, err = origin.Restore(ctx, store, rec, filepath.Join(tmp, "pipeline")); err != nil {
		cleanup()
		return "", nil, nil, err
	}
	return file, rec, cleanup, nil
}

// Load loads the pipeline file (or Kubeflow Trainer TrainJob) at file
// with the runtimes of --runtimes, printing the loader's warnings.
func (f *Factory) Load(file string) (*pipeline.Pipeline, error) {
	opts := pipeline.LoadOptions{}
	if len(f.Runtimes) > 0 {
		set, err := trainer.ReadRuntimes(f.Runtimes)
		if err != nil {
			return nil, err
		}
		opts.Runtimes = set
	}
	if f.ClusterRuntimes {
		if opts.Runtimes == nil {
			opts.Runtimes = &trainer.Set{}
		}
		opts.Runtimes.Fallback = f.clusterFallback
	}
	p, err := pipeline.LoadWith(file, opts)
	if p != nil && f.IOStreams != nil {
		for _, w := range p.Warnings {
			fmt.Fprintf(f.IOStreams.ErrOut, "Warning: %s\n", w)
		}
	}
	return p, err
}
