package argo

import (
	"encoding/json"
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/pipeline"
)

// AnnotationSteps is the annotation of a compiled workflow that maps the
// pipeline's steps to their DAG tasks, in the pipeline's order: a JSON
// array of StepTask. A reader of the workflow's status finds a step's
// nodes through it, never by guessing the task's name.
const AnnotationSteps = "pipectl.dev/steps"

// StepTask names a step and its DAG task in the compiled workflow.
type StepTask struct {
	// Step is the step's name in the pipeline.
	Step string `json:"step"`
	// Task is the name of its task in the DAG template "main".
	Task string `json:"task"`
}

// stepTasks is the value of AnnotationSteps for p.
func stepTasks(p *pipeline.Pipeline, tasks map[string]string) (string, error) {
	st := make([]StepTask, 0, len(p.Steps))
	for _, s := range p.Steps {
		st = append(st, StepTask{Step: s.Name, Task: tasks[s.Name]})
	}
	b, err := json.Marshal(st)
	return string(b), err
}

// StepTasks returns the steps of a workflow and their tasks, in the
// pipeline's order, from its AnnotationSteps. A workflow without the
// annotation (not compiled by pipectl) has one step per task of its DAG
// template "main", named after the task.
func StepTasks(wf *wfv1.Workflow) ([]StepTask, error) {
	if v, ok := wf.Annotations[AnnotationSteps]; ok {
		var st []StepTask
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			return nil, fmt.Errorf("workflow %s: annotation %s: %w", wf.Name, AnnotationSteps, err)
		}
		return st, nil
	}
	var st []StepTask
	for _, t := range wf.Spec.Templates {
		if t.Name == EntryTemplate && t.DAG != nil {
			for _, task := range t.DAG.Tasks {
				st = append(st, StepTask{Step: task.Name, Task: task.Name})
			}
		}
	}
	return st, nil
}

// TaskNode returns the node of a DAG task in wf (a Pod node, or the Retry
// node of a step with retries), or nil before the task has one.
func TaskNode(wf *wfv1.Workflow, task string) *wfv1.NodeStatus {
	var found *wfv1.NodeStatus
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.DisplayName == task && n.BoundaryID == wf.Name && n.Type != wfv1.NodeTypeDAG {
			if found == nil || n.StartedAt.After(found.StartedAt.Time) {
				found = &n
			}
		}
	}
	return found
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
