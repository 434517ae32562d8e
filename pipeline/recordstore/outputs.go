package recordstore

import (
	"context"
	"errors"
	"fmt"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// WriteOutputs stores the outputs record of a step. It is written after
// every output it names (and its metadata), so its presence means the
// step's outputs are complete.
func WriteOutputs(ctx context.Context, s artifacts.Store, run, step string, outputs []record.OutputRecord) error {
	return WriteStepOutputs(ctx, s, record.StepOutputs{Run: run, Step: step, Outputs: outputs})
}

// WriteStepOutputs stores rec at OutputsKey(rec.Run, rec.Step).
func WriteStepOutputs(ctx context.Context, s artifacts.Store, rec record.StepOutputs) error {
	if rec.Outputs == nil {
		rec.Outputs = []record.OutputRecord{}
	}
	return artifacts.PutJSON(ctx, s, record.OutputsKey(rec.Run, rec.Step), rec)
}

// ReadOutputs reads the outputs of a step from its outputs record. A step
// that published nothing (yet) gives an error for which errors.Is(err,
// ErrNotFound) holds.
func ReadOutputs(ctx context.Context, s artifacts.Store, run, step string) ([]record.OutputRecord, error) {
	rec, err := ReadStepOutputs(ctx, s, run, step)
	if err != nil {
		return nil, err
	}
	return rec.Outputs, nil
}

// ReadStepOutputs reads the outputs record of a step, as ReadOutputs.
func ReadStepOutputs(ctx context.Context, s artifacts.Store, run, step string) (record.StepOutputs, error) {
	var rec record.StepOutputs
	if err := artifacts.GetJSON(ctx, s, record.OutputsKey(run, step), &rec); err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			return rec, fmt.Errorf("step %s of run %s has no outputs record at %s: %w", step, run, s.URI(record.OutputsKey(run, step)), artifacts.ErrNotFound)
		}
		return rec, err
	}
	return rec, nil
}
