package argo

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// stepTasks is the value of wire.AnnotationSteps for p.
func stepTasks(p *pipeline.Pipeline, tasks map[string]string) (string, error) {
	st := make([]wire.StepTask, 0, len(p.Steps))
	for _, s := range p.Steps {
		st = append(st, wire.StepTask{Step: s.Name, Task: tasks[s.Name]})
	}
	b, err := json.Marshal(st)
	return string(b), err
}

// StepTasks returns the steps of a workflow and their tasks, in the
// pipeline's order, from its wire.AnnotationSteps. A workflow without the
// annotation (not compiled by pipectl) has one step per task of its DAG
// template "main", named after the task.
func StepTasks(wf *wfv1.Workflow) ([]wire.StepTask, error) {
	if v, ok := wf.Annotations[wire.AnnotationSteps]; ok {
		var st []wire.StepTask
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			return nil, fmt.Errorf("workflow %s: annotation %s: %w", wf.Name, wire.AnnotationSteps, err)
		}
		return st, nil
	}
	var st []wire.StepTask
	for _, t := range wf.Spec.Templates {
		if t.Name == EntryTemplate && t.DAG != nil {
			for _, task := range t.DAG.Tasks {
				st = append(st, wire.StepTask{Step: task.Name, Task: task.Name})
			}
		}
	}
	return st, nil
}

// TaskNode returns the node of a DAG task of the template "main" or the
// exit handler "finally" in wf (a Pod node, the Retry node of a step with
// retries, the TaskGroup node of a loop step), or nil before the task has one.
func TaskNode(wf *wfv1.Workflow, task string) *wfv1.NodeStatus {
	var found *wfv1.NodeStatus
	boundaries := dagBoundaries(wf)
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.DisplayName == task && boundaries[n.BoundaryID] && n.Type != wfv1.NodeTypeDAG {
			if found == nil || n.StartedAt.After(found.StartedAt.Time) {
				found = &n
			}
		}
	}
	return found
}

// dagBoundaries are the ids of the nodes of wf's DAG templates "main" (the
// workflow's own node) and "finally" (its onExit node), and of its bounded
// loops' templates.
func dagBoundaries(wf *wfv1.Workflow) map[string]bool {
	b := map[string]bool{wf.Name: true}
	for id, n := range wf.Status.Nodes {
		if n.Name == wf.Name+".onExit" {
			b[id] = true
		}
	}
	loopBoundaries(wf, b)
	return b
}

// IterationNodes returns the nodes of the iterations of a loop task of wf
// ("TASK(i:…)": a Pod node, or a Retry node with retries), by index.
func IterationNodes(wf *wfv1.Workflow, task string) map[int]*wfv1.NodeStatus {
	out := map[int]*wfv1.NodeStatus{}
	boundaries := map[string]bool{wf.Name: true}
	loopBoundaries(wf, boundaries)
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		rest, ok := strings.CutPrefix(n.DisplayName, task+"(")
		if !ok || !boundaries[n.BoundaryID] || n.Type == wfv1.NodeTypeDAG || strings.Contains(rest, ")(") {
			continue
		}
		idx, _, ok := strings.Cut(rest, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 {
			continue
		}
		if found := out[i]; found == nil || n.StartedAt.After(found.StartedAt.Time) {
			out[i] = &n
		}
	}
	return out
}

// IterationItems returns the items of a loop step's iterations in wf, as
// exec evaluates them (see plan.Wiring.ItemList): from the task's wiring,
// the workflow's arguments and the upstream task's output. It fails while
// they are not known (the upstream task has not finished).
func IterationItems(wf *wfv1.Workflow, task string) ([]string, error) {
	var w *plan.Wiring
	if arg, ok := taskArg(wf, task, StepInput); ok {
		var err error
		if w, err = plan.DecodeWiring(arg); err != nil {
			return nil, err
		}
	}
	if w == nil || w.Items == nil {
		return nil, fmt.Errorf("task %s is not a loop", task)
	}
	v := plan.Values{Params: map[string]string{}, Upstream: map[string]string{}}
	for _, p := range wf.Spec.Arguments.Parameters {
		if p.Value != nil {
			val, err := wire.DecodeValue(p.Value.String())
			if err != nil {
				return nil, err
			}
			v.Params[p.Name] = val
		}
	}
	parts := slices.Clone(w.Items)
	for _, part := range w.Items {
		for _, l := range part.Product {
			parts = append(parts, l.List...)
		}
	}
	for _, part := range parts {
		if part.Upstream == "" {
			continue
		}
		// The wiring does not name the producer (it travels as a task
		// argument "in-loop-items": {{tasks.T.outputs.parameters.O}}).
		val, err := upstreamArg(wf, task, part.Upstream)
		if err != nil {
			return nil, err
		}
		v.Upstream[part.Upstream] = val
	}
	return w.ItemList(v)
}

// upstreamArg is the value of the upstream output parameter the task gets
// as its argument "in-" + input, read from the producing task's node.
func upstreamArg(wf *wfv1.Workflow, task, input string) (string, error) {
	name := UpstreamInputPrefix + input
	arg, ok := taskArg(wf, task, name)
	if !ok {
		return "", fmt.Errorf("task %s has no argument %s", task, name)
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(arg, "{{tasks."), "}}")
	producer, out, ok := strings.Cut(ref, ".outputs.parameters.")
	if !ok {
		return "", fmt.Errorf("task %s: argument %s: unexpected %q", task, name, arg)
	}
	n := TaskNode(wf, producer)
	if n == nil || n.Outputs == nil {
		return "", fmt.Errorf("task %s has not finished", producer)
	}
	for _, p := range n.Outputs.Parameters {
		if p.Name == out && p.Value != nil {
			return wire.DecodeValue(p.Value.String())
		}
	}
	return "", fmt.Errorf("task %s has no output parameter %s", producer, out)
}

// taskArg is the value of the argument name of the entry DAG's task.
func taskArg(wf *wfv1.Workflow, task, name string) (string, bool) {
	for _, t := range wf.Spec.Templates {
		if t.Name != EntryTemplate || t.DAG == nil {
			continue
		}
		for _, dt := range t.DAG.Tasks {
			if dt.Name != task {
				continue
			}
			for _, a := range dt.Arguments.Parameters {
				if a.Name == name && a.Value != nil {
					return a.Value.String(), true
				}
			}
		}
	}
	return "", false
}

// PodNodes returns the Pod nodes of a step node, oldest attempt first: the
// node itself for a Pod node, the children of a Retry node. A skipped or
// omitted step ran none: its node's children are the tasks after it (a
// task given a oneOf output runs after a skipped candidate).
func PodNodes(wf *wfv1.Workflow, n *wfv1.NodeStatus) []wfv1.NodeStatus {
	if n == nil || n.Phase == wfv1.NodeSkipped || n.Phase == wfv1.NodeOmitted {
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
