package argorun

import (
	"strconv"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline/argo"
)

// stepNodes returns the node of each of steps' DAG task in wf (absent
// before the task has one). A step's task is the one the workflow's step
// annotation names (argo.StepTasks), or, for a step it does not name, the
// task of the step's name.
func stepNodes(wf *wfv1.Workflow, steps []string) map[string]*wfv1.NodeStatus {
	task := map[string]string{}
	if tasks, err := argo.StepTasks(wf); err == nil {
		for _, st := range tasks {
			task[st.Step] = st.Task
		}
	}
	out := map[string]*wfv1.NodeStatus{}
	for _, s := range steps {
		t, ok := task[s]
		if !ok {
			t = s
		}
		if n := argo.TaskNode(wf, t); n != nil {
			out[s] = n
		}
	}
	return out
}

// stepStatus maps an Argo node phase to a step status.
func stepStatus(p wfv1.NodePhase) string {
	switch p {
	case wfv1.NodeRunning:
		return artifacts.StatusRunning
	case wfv1.NodeSucceeded:
		return artifacts.StatusSucceeded
	case wfv1.NodeFailed, wfv1.NodeError:
		return artifacts.StatusFailed
	case wfv1.NodeSkipped, wfv1.NodeOmitted:
		return artifacts.StatusSkipped
	default:
		return artifacts.StatusPending
	}
}

// runStatus maps a workflow's phase to a run status: a failed workflow that
// was told to stop or terminate (spec.shutdown) is Cancelled.
func runStatus(wf *wfv1.Workflow) string {
	switch wf.Status.Phase {
	case wfv1.WorkflowSucceeded:
		return artifacts.StatusSucceeded
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		if wf.Spec.Shutdown != "" {
			return artifacts.StatusCancelled
		}
		return artifacts.StatusFailed
	default:
		return artifacts.StatusRunning
	}
}

// updateRecord brings a run record up to date with its workflow: the run's
// status, end and message, and each step's status, attempts, exit code,
// times and message. Outputs are not taken from the workflow: Record reads
// them, typed, from each step's outputs record. Pure.
func updateRecord(rec *artifacts.Run, wf *wfv1.Workflow) {
	rec.On = On
	rec.Status = runStatus(wf)
	if !wf.Status.StartedAt.IsZero() {
		rec.Started = wf.Status.StartedAt.Time
	}
	if rec.Status != artifacts.StatusRunning && !wf.Status.FinishedAt.IsZero() {
		t := wf.Status.FinishedAt.Time
		rec.Finished = &t
	}
	if wf.Status.Message != "" {
		rec.Message = wf.Status.Message
	}
	names := make([]string, len(rec.Steps))
	for i, s := range rec.Steps {
		names[i] = s.Name
	}
	nodes := stepNodes(wf, names)
	for i := range rec.Steps {
		s := &rec.Steps[i]
		n := nodes[s.Name]
		if n == nil {
			if rec.Status != artifacts.StatusRunning && s.Status == artifacts.StatusPending {
				s.Status = artifacts.StatusSkipped
			}
			continue
		}
		s.Status = stepStatus(n.Phase)
		if s.Status == artifacts.StatusFailed && rec.Status == artifacts.StatusCancelled {
			s.Status = artifacts.StatusCancelled
		}
		s.Message = n.Message
		pods := argo.PodNodes(wf, n)
		if len(pods) > 0 {
			s.Attempts = len(pods)
		}
		if !n.StartedAt.IsZero() {
			t := n.StartedAt.Time
			s.Started = &t
		}
		if !n.FinishedAt.IsZero() {
			t := n.FinishedAt.Time
			s.Finished = &t
		}
		out := n.Outputs
		if len(pods) > 0 && pods[len(pods)-1].Outputs != nil {
			out = pods[len(pods)-1].Outputs
		}
		if out == nil {
			continue
		}
		if out.ExitCode != nil {
			if c, err := strconv.Atoi(*out.ExitCode); err == nil {
				s.ExitCode = &c
			}
		}
	}
}
