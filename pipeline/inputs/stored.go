package inputs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Invocation evaluates a step's plan in a pod (plan.Wiring.Invocation)
// with its inputs resolved from the producers' outputs records in store s
// (Stored); it also returns the input artifacts' sha256, by input name, for
// the fingerprint.
func Invocation(ctx context.Context, s artifacts.Store, c *components.Program, w *plan.Wiring, v plan.Values) (*components.Invocation, map[string]string, error) {
	src := Stored(ctx, s, v.Run)
	sums, err := Resolve(ctx, s, w, &v, src)
	if err != nil {
		return nil, nil, err
	}
	if sums, err = Iteration(w, &v, sums, src); err != nil {
		return nil, nil, err
	}
	inv, err := w.Invocation(c, s, v)
	return inv, sums, err
}

// Stored is the Source of a step running in a pod: its producers' outputs
// as their outputs records in store s say (a reused producer's outputs are
// an earlier run's).
func Stored(ctx context.Context, s artifacts.Store, run string) *StoredSource {
	return &StoredSource{ctx: ctx, s: s, run: run, records: map[string]stored{}}
}

// StoredSource reads producers' outputs from the store (see Stored).
type StoredSource struct {
	ctx     context.Context
	s       artifacts.Store
	run     string
	records map[string]stored // outputs records read, by step (or iteration)
}

// stored is an outputs record as read: found, or not (ErrNotFound).
type stored struct {
	rec record.StepOutputs
	err error
}

// outputs reads the outputs record of step once: a producer's record does
// not change while its consumers run, nor does its absence.
func (st *StoredSource) outputs(step string) (record.StepOutputs, error) {
	if r, ok := st.records[step]; ok {
		return r.rec, r.err
	}
	rec, err := recordstore.ReadStepOutputs(st.ctx, st.s, st.run, step)
	if err == nil || errors.Is(err, artifacts.ErrNotFound) {
		st.records[step] = stored{rec, err}
	}
	return rec, err
}

// Finished returns an output of a step of the run as its outputs record in
// the store says; ok is false when the step has none (it did not run) or
// its record says it was skipped.
func (st *StoredSource) Finished(ref plan.OutputRef) (record.OutputRecord, bool, error) {
	rec, err := st.outputs(ref.Step)
	if errors.Is(err, artifacts.ErrNotFound) || err == nil && rec.Skipped != "" {
		return record.OutputRecord{}, false, nil
	}
	if err != nil {
		return record.OutputRecord{}, false, err
	}
	outs := rec.Outputs
	i := slices.IndexFunc(outs, func(o record.OutputRecord) bool { return o.Name == ref.Output })
	if i < 0 {
		return record.OutputRecord{}, false, fmt.Errorf("its outputs record has no output %q", ref.Output)
	}
	return outs[i], true, nil
}

// Artifact returns the URI and sha256 of an output artifact from its
// producer's outputs record; a producer without an outputs record gives
// <run>/<step>/<output> and the sha256 of that artifact's metadata.
func (st *StoredSource) Artifact(ref plan.OutputRef) (string, string, error) {
	rec, err := st.outputs(ref.Step)
	if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
		return "", "", err
	}
	outs := rec.Outputs
	if i := slices.IndexFunc(outs, func(o record.OutputRecord) bool { return o.Name == ref.Output }); i >= 0 && outs[i].URI != "" {
		return outs[i].URI, outs[i].SHA256, nil
	}
	key := record.OutputKey(st.run, ref.Step, ref.Output)
	meta, err := artifacts.ReadMetadata(st.ctx, st.s, key)
	if err != nil {
		return "", "", fmt.Errorf("output %q of step %s: %w", ref.Output, ref.Step, err)
	}
	return st.s.URI(key), meta.SHA256, nil
}

// Iterations reads the outputs records of the iterations of a loop step:
// iterations 0, 1, … until one has none when all (the step runs once every
// iteration succeeded, so they all have one), else those in its.
func (st *StoredSource) Iterations(ref plan.OutputRef, its []int, all bool) ([]record.OutputRecord, error) {
	recs := []record.OutputRecord{}
	for k := 0; all || k < len(its); k++ {
		i := k
		if !all {
			i = its[k]
		}
		rec, err := st.outputs(pipeline.IterationName(ref.Step, i))
		if errors.Is(err, artifacts.ErrNotFound) && all {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Skipped != "" {
			continue // its condition was false: only the iterations that ran give an output
		}
		at := slices.IndexFunc(rec.Outputs, func(o record.OutputRecord) bool { return o.Name == ref.Output })
		if at < 0 {
			return nil, fmt.Errorf("iteration %d of step %s has no output %q", i, ref.Step, ref.Output)
		}
		recs = append(recs, rec.Outputs[at])
	}
	return recs, nil
}
