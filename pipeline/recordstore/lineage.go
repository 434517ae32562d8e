package recordstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// consumedPrefix is where the index of consumers is kept: an empty object
// .lineage/consumed/SHA256/RUN/STEP for each step that read content SHA256.
const consumedPrefix = ".lineage/consumed/"

// WriteInputs stores the inputs record of a step and adds the step to the
// index of each input's content (ListConsumers).
func WriteInputs(ctx context.Context, s artifacts.Store, rec record.StepInputs) error {
	if rec.Inputs == nil {
		rec.Inputs = []record.InputRecord{}
	}
	// The record and the index entries are written at once (one round
	// trip's time, not one each).
	errs := make([]error, 1+len(rec.Inputs))
	var wg sync.WaitGroup
	for i, in := range rec.Inputs {
		if validSHA256(in.SHA256) {
			wg.Go(func() {
				errs[1+i] = s.Put(ctx, consumedPrefix+in.SHA256+"/"+rec.Run+"/"+rec.Step, strings.NewReader(""), 0)
			})
		}
	}
	errs[0] = artifacts.PutJSON(ctx, s, record.InputsKey(rec.Run, rec.Step), rec)
	wg.Wait()
	return errors.Join(errs...)
}

// ReadInputs reads the inputs record of a step; a step without one (it
// did not run, or ran before records had inputs) gives an error for which
// errors.Is(err, ErrNotFound) holds.
func ReadInputs(ctx context.Context, s artifacts.Store, run, step string) (record.StepInputs, error) {
	var rec record.StepInputs
	if err := artifacts.GetJSON(ctx, s, record.InputsKey(run, step), &rec); err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			return rec, fmt.Errorf("step %s of run %s has no inputs record: %w", step, run, artifacts.ErrNotFound)
		}
		return rec, err
	}
	return rec, nil
}

// ListConsumers lists the steps that read content sha256, from the index
// WriteInputs keeps (one listing of its prefix, not a scan of the runs),
// sorted by run and step.
func ListConsumers(ctx context.Context, s artifacts.Store, sha256 string) ([]record.Consumer, error) {
	if !validSHA256(sha256) {
		return nil, fmt.Errorf("%q is not a sha256 (64 lowercase hex digits)", sha256)
	}
	prefix := consumedPrefix + sha256 + "/"
	entries, err := s.List(ctx, prefix, true)
	if err != nil {
		return nil, err
	}
	var out []record.Consumer
	for _, e := range entries {
		rest := strings.TrimPrefix(e.Key, prefix)
		run, step, ok := strings.Cut(rest, "/")
		if !ok || run == "" || step == "" || path.Clean(rest) != rest {
			continue
		}
		out = append(out, record.Consumer{Run: run, Step: step})
	}
	slices.SortFunc(out, func(a, b record.Consumer) int {
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return strings.Compare(a.Step, b.Step)
	})
	return out, nil
}

func validSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
