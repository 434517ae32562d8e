package recordstore

import (
	"context"
	"errors"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// ReadGang reads the gang record of a step; one that was never written
// is empty (no error).
func ReadGang(ctx context.Context, s artifacts.Store, run, step string) (record.StepGang, error) {
	rec := record.StepGang{Run: run, Step: step}
	err := artifacts.GetJSON(ctx, s, record.GangKey(run, step), &rec)
	if errors.Is(err, artifacts.ErrNotFound) {
		return record.StepGang{Run: run, Step: step}, nil
	}
	return rec, err
}

// AddGangAttempt appends a to the gang record of a step (numbered after
// the attempts it holds: those of the step's earlier retries) and returns
// it as recorded.
func AddGangAttempt(ctx context.Context, s artifacts.Store, run, step string, a record.GangAttempt, before int) (record.GangAttempt, error) {
	rec, err := ReadGang(ctx, s, run, step)
	if err != nil {
		return a, err
	}
	a.Attempt += before
	rec.GangAttempts = append(rec.GangAttempts, a)
	return a, artifacts.PutJSON(ctx, s, record.GangKey(run, step), rec)
}

// SetGangProgress sets the metrics series of the gang record of a step.
func SetGangProgress(ctx context.Context, s artifacts.Store, run, step string, p record.Progress) error {
	rec, err := ReadGang(ctx, s, run, step)
	if err != nil {
		return err
	}
	rec.Progress = &p
	return artifacts.PutJSON(ctx, s, record.GangKey(run, step), rec)
}
