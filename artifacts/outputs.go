package artifacts

import (
	"context"
	"errors"
	"fmt"
)

// OutputsKey is the key of a step's outputs record: the typed records of
// every output the step published, written once by whoever published them.
func OutputsKey(run, step string) string { return run + "/" + step + "/outputs.json" }

// StepOutputs is the outputs record of one step, stored at OutputsKey.
type StepOutputs struct {
	// Run and Step name the step whose outputs these are.
	Run  string `json:"run"`
	Step string `json:"step"`
	// Outputs are the step's outputs in the component's order, each with
	// its declared type: artifacts by URI, size and sha256, parameters by
	// value.
	Outputs []OutputRecord `json:"outputs"`
	// CachedFrom, when set, names the earlier run whose step's outputs
	// these are: the step was reused, not run (see package stepcache).
	CachedFrom string `json:"cachedFrom,omitempty"`
	// Skipped, when set, says why the step (an iteration of a loop step
	// whose condition compares its item) did not run: it has no outputs.
	Skipped string `json:"skipped,omitempty"`
}

// WriteOutputs stores the outputs record of a step. It is written after
// every output it names (and its metadata), so its presence means the
// step's outputs are complete.
func WriteOutputs(ctx context.Context, s Store, run, step string, outputs []OutputRecord) error {
	return WriteStepOutputs(ctx, s, StepOutputs{Run: run, Step: step, Outputs: outputs})
}

// WriteStepOutputs stores rec at OutputsKey(rec.Run, rec.Step).
func WriteStepOutputs(ctx context.Context, s Store, rec StepOutputs) error {
	if rec.Outputs == nil {
		rec.Outputs = []OutputRecord{}
	}
	return PutJSON(ctx, s, OutputsKey(rec.Run, rec.Step), rec)
}

// ReadOutputs reads the outputs of a step from its outputs record. A step
// that published nothing (yet) gives an error for which errors.Is(err,
// ErrNotFound) holds.
func ReadOutputs(ctx context.Context, s Store, run, step string) ([]OutputRecord, error) {
	rec, err := ReadStepOutputs(ctx, s, run, step)
	if err != nil {
		return nil, err
	}
	return rec.Outputs, nil
}

// ReadStepOutputs reads the outputs record of a step, as ReadOutputs.
func ReadStepOutputs(ctx context.Context, s Store, run, step string) (StepOutputs, error) {
	var rec StepOutputs
	if err := GetJSON(ctx, s, OutputsKey(run, step), &rec); err != nil {
		if errors.Is(err, ErrNotFound) {
			return rec, fmt.Errorf("step %s of run %s has no outputs record at %s: %w", step, run, s.URI(OutputsKey(run, step)), ErrNotFound)
		}
		return rec, err
	}
	return rec, nil
}
