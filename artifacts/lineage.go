package artifacts

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// InputsKey is the key of a step's inputs record: the input artifacts the
// step's program read, written by the step executor when the step ran.
func InputsKey(run, step string) string { return run + "/" + step + "/inputs.json" }

// consumedPrefix is where the index of consumers is kept: an empty object
// .lineage/consumed/SHA256/RUN/STEP for each step that read content SHA256.
const consumedPrefix = ".lineage/consumed/"

// StepInputs is the inputs record of one step, stored at InputsKey.
type StepInputs struct {
	Run  string `json:"run"`
	Step string `json:"step"`
	// Inputs are the input artifacts, by name order: where each was read
	// from and its content's sha256 ("" when it was not computed).
	Inputs []InputRecord `json:"inputs"`
}

// InputRecord is one input artifact of a step.
type InputRecord struct {
	Name   string `json:"name"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256,omitempty"`
}

// Consumer is a step that read some content.
type Consumer struct {
	Run  string `json:"run"`
	Step string `json:"step"`
}

// WriteInputs stores the inputs record of a step and adds the step to the
// index of each input's content (ListConsumers).
func WriteInputs(ctx context.Context, s Store, rec StepInputs) error {
	if rec.Inputs == nil {
		rec.Inputs = []InputRecord{}
	}
	if err := PutJSON(ctx, s, InputsKey(rec.Run, rec.Step), rec); err != nil {
		return err
	}
	var errs []error
	for _, in := range rec.Inputs {
		if validSHA256(in.SHA256) {
			errs = append(errs, s.Put(ctx, consumedPrefix+in.SHA256+"/"+rec.Run+"/"+rec.Step, strings.NewReader(""), 0))
		}
	}
	return errors.Join(errs...)
}

// ReadInputs reads the inputs record of a step; a step without one (it
// did not run, or ran before records had inputs) gives an error for which
// errors.Is(err, ErrNotFound) holds.
func ReadInputs(ctx context.Context, s Store, run, step string) (StepInputs, error) {
	var rec StepInputs
	if err := GetJSON(ctx, s, InputsKey(run, step), &rec); err != nil {
		if errors.Is(err, ErrNotFound) {
			return rec, fmt.Errorf("step %s of run %s has no inputs record: %w", step, run, ErrNotFound)
		}
		return rec, err
	}
	return rec, nil
}

// ListConsumers lists the steps that read content sha256, from the index
// WriteInputs keeps (one listing of its prefix, not a scan of the runs),
// sorted by run and step.
func ListConsumers(ctx context.Context, s Store, sha256 string) ([]Consumer, error) {
	if !validSHA256(sha256) {
		return nil, fmt.Errorf("%q is not a sha256 (64 lowercase hex digits)", sha256)
	}
	prefix := consumedPrefix + sha256 + "/"
	entries, err := s.List(ctx, prefix, true)
	if err != nil {
		return nil, err
	}
	var out []Consumer
	for _, e := range entries {
		rest := strings.TrimPrefix(e.Key, prefix)
		run, step, ok := strings.Cut(rest, "/")
		if !ok || run == "" || step == "" || path.Clean(rest) != rest {
			continue
		}
		out = append(out, Consumer{Run: run, Step: step})
	}
	slices.SortFunc(out, func(a, b Consumer) int {
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
