package step

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// RunFields returns the {{run.FIELD}} values of a finally step from what
// its exit-handler task gets: status is {{workflow.status}} (Succeeded,
// Failed or Error; Error counts as Failed), failures {{workflow.failures}}
// (a JSON list of failed nodes, as Argo gives it: quoted), steps the
// base64 of the workflow's AnnotationSteps. Failed steps are named as in
// the run record: a loop iteration's node "TASK(i:…)" is STEP[i]; a loop
// step is named only when none of its iterations failed.
func RunFields(status, failures, steps string) (map[string]string, error) {
	b, err := base64.StdEncoding.DecodeString(steps)
	if err != nil {
		return nil, fmt.Errorf("--argo-steps: %v", err)
	}
	var st []wire.StepTask
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("--argo-steps: %v", err)
	}
	if u, err := strconv.Unquote(failures); err == nil {
		failures = u
	}
	var nodes []struct {
		DisplayName string `json:"displayName"`
	}
	if strings.TrimSpace(failures) != "" && strings.TrimSpace(failures) != "null" {
		if err := json.Unmarshal([]byte(failures), &nodes); err != nil {
			return nil, fmt.Errorf("--argo-failures: expected Argo's JSON list of failed nodes: %v", err)
		}
	}
	failedTask := map[string]bool{}
	failedIter := map[string]map[int]bool{}
	for _, n := range nodes {
		task, rest, _ := strings.Cut(n.DisplayName, "(")
		if rest == "" {
			failedTask[task] = true
			continue
		}
		// TASK(i:item) is an iteration; TASK(n) a retry attempt.
		idx, _, isIter := strings.Cut(strings.TrimSuffix(rest, ")"), ":")
		if i, err := strconv.Atoi(idx); err == nil && isIter {
			if failedIter[task] == nil {
				failedIter[task] = map[int]bool{}
			}
			failedIter[task][i] = true
		} else if err == nil {
			failedTask[task] = true
		}
	}
	failed := []string{}
	for _, s := range st {
		if its := failedIter[s.Task]; len(its) > 0 {
			for i := 0; len(its) > 0; i++ {
				if its[i] {
					failed = append(failed, pipeline.IterationName(s.Step, i))
					delete(its, i)
				}
			}
			continue
		}
		if failedTask[s.Task] {
			failed = append(failed, s.Step)
		}
	}
	names, err := json.Marshal(failed)
	if err != nil {
		return nil, err
	}
	if status == "Error" {
		status = "Failed"
	}
	return map[string]string{pipeline.RunStatus: status, pipeline.RunFailedSteps: string(names)}, nil
}
