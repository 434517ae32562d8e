package argo

import (
	"sort"
	"strconv"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
)

// StepNode returns the node of a step's DAG task in wf (a Pod node, or the
// Retry node of a step with retries), or nil before the task has one. The
// task is the step's name, or "step-" and the name (see TaskNames).
func StepNode(wf *wfv1.Workflow, step string) *wfv1.NodeStatus {
	var found *wfv1.NodeStatus
	for _, task := range []string{step, "step-" + step} {
		for id := range wf.Status.Nodes {
			n := wf.Status.Nodes[id]
			if n.DisplayName == task && n.BoundaryID == wf.Name && n.Type != wfv1.NodeTypeDAG {
				if found == nil || n.StartedAt.After(found.StartedAt.Time) {
					found = &n
				}
			}
		}
		if found != nil {
			return found
		}
	}
	return nil
}

// PodNodes returns the Pod nodes of a step node, oldest attempt first: the
// node itself for a Pod node, the children of a Retry node.
func PodNodes(wf *wfv1.Workflow, n *wfv1.NodeStatus) []wfv1.NodeStatus {
	if n == nil {
		return nil
	}
	if n.Type == wfv1.NodeTypePod {
		return []wfv1.NodeStatus{*n}
	}
	var out []wfv1.NodeStatus
	for _, id := range n.Children {
		if c, ok := wf.Status.Nodes[id]; ok && c.Type == wfv1.NodeTypePod {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(&out[j].StartedAt) })
	return out
}

// StepStatus maps an Argo node phase to a step status.
func StepStatus(p wfv1.NodePhase) string {
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

// RunStatus maps a workflow's phase to a run status: a failed workflow that
// was told to stop or terminate (spec.shutdown) is Cancelled.
func RunStatus(wf *wfv1.Workflow) string {
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

// UpdateRecord brings a run record up to date with its workflow: the run's
// status, end and message, and each step's status, attempts, exit code,
// times, message and output parameters (decoded; an output already in the
// record keeps its type, a new one is a "string"). Artifact outputs are
// not in the workflow: the caller adds them from the store. Pure.
func UpdateRecord(rec *artifacts.Run, wf *wfv1.Workflow) {
	rec.On = "argo"
	rec.Status = RunStatus(wf)
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
	for i := range rec.Steps {
		s := &rec.Steps[i]
		n := StepNode(wf, s.Name)
		if n == nil {
			if rec.Status != artifacts.StatusRunning && s.Status == artifacts.StatusPending {
				s.Status = artifacts.StatusSkipped
			}
			continue
		}
		s.Status = StepStatus(n.Phase)
		if s.Status == artifacts.StatusFailed && rec.Status == artifacts.StatusCancelled {
			s.Status = artifacts.StatusCancelled
		}
		s.Message = n.Message
		pods := PodNodes(wf, n)
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
		for _, p := range out.Parameters {
			if p.Value == nil {
				continue
			}
			v, err := components.DecodeValue(p.Value.String())
			if err != nil {
				v = p.Value.String()
			}
			setParam(s, p.Name, v)
		}
	}
}

func setParam(s *artifacts.StepRecord, name, v string) {
	for i := range s.Outputs {
		if s.Outputs[i].Name == name {
			s.Outputs[i].Value = &v
			return
		}
	}
	s.Outputs = append(s.Outputs, artifacts.OutputRecord{Name: name, Type: "string", Value: &v})
}
