package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// MissingOutputsError names the declared outputs of a step that rank 0 did
// not publish.
type MissingOutputsError struct {
	Step    string
	Outputs []string
	Details []string
}

func (e *MissingOutputsError) Error() string {
	return fmt.Sprintf("step %s: rank 0 did not publish output(s) %s: %s", e.Step, strings.Join(e.Outputs, ", "), strings.Join(e.Details, "; "))
}

// CollectOutputs checks, once the JobSet completed, that rank 0 published
// every declared output of the step: each is in the step's outputs record
// (recordstore.ReadOutputs), which rank 0 writes after every output and its
// metadata. With paramsDir set, it writes each output parameter's value to
// paramsDir/<name> (execution.WriteOutputParams: where Argo reads the
// launcher pod's output parameters). A missing output is a
// *MissingOutputsError naming it.
func CollectOutputs(ctx context.Context, s artifacts.Store, run, step string, outputs []components.ProgramIO, paramsDir string) ([]record.OutputRecord, error) {
	published, recErr := recordstore.ReadOutputs(ctx, s, run, step)
	if recErr != nil && !errors.Is(recErr, artifacts.ErrNotFound) {
		return nil, fmt.Errorf("read rank 0's outputs record: %w", recErr)
	}
	byName := map[string]record.OutputRecord{}
	for _, r := range published {
		byName[r.Name] = r
	}
	missing := &MissingOutputsError{Step: step}
	var records []record.OutputRecord
	for _, out := range outputs {
		r, ok := byName[out.Name]
		if !ok || (components.IsArtifact(out.Type) && r.URI == "") || (!components.IsArtifact(out.Type) && r.Value == nil) {
			missing.Outputs = append(missing.Outputs, out.Name)
			where := "not in its outputs record"
			if recErr != nil {
				where = "no outputs record at " + s.URI(record.OutputsKey(run, step))
			}
			missing.Details = append(missing.Details, fmt.Sprintf("%s (%s): %s", out.Name, out.Type, where))
			continue
		}
		records = append(records, r)
	}
	if len(missing.Outputs) > 0 {
		return records, missing
	}
	if paramsDir != "" {
		if err := execution.WriteOutputParams(paramsDir, records); err != nil {
			return records, err
		}
	}
	return records, nil
}
