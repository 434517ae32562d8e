package argo

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/pipeline/plan"
)

// bounded returns the task of a loop step with loop.parallelism: a task,
// with the step's arguments, dependencies and when, running a DAG template
// of its own ("TASK-loop") whose parallelism is the loop's; that template
// has one task of the same name looping over the step's template, its
// arguments passed through as the template's inputs. Argo's template
// parallelism bounds the running children of one invocation of the
// template: here the loop's iterations, and nothing else of the run.
func (c *compiler) bounded(task wfv1.DAGTask, sp *plan.Step) (wfv1.DAGTask, error) {
	inner := wfv1.DAGTask{Name: task.Name, Template: task.Template}
	name := unique(task.Name+"-loop", c.names)
	c.names[name] = true
	t := wfv1.Template{Name: name, Parallelism: ptr(int64(sp.Loop.Parallelism))}
	for _, a := range task.Arguments.Parameters {
		t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: a.Name})
		inner.Arguments.Parameters = append(inner.Arguments.Parameters, wfv1.Parameter{
			Name: a.Name, Value: wfv1.AnyStringPtr("{{inputs.parameters." + a.Name + "}}"),
		})
	}
	if err := c.loop(&inner, sp, true); err != nil {
		return wfv1.DAGTask{}, err
	}
	t.DAG = &wfv1.DAGTemplate{Tasks: []wfv1.DAGTask{inner}, FailFast: new(false)}
	c.templates = append(c.templates, t)
	task.Template = name
	return task, nil
}

// loopBoundaries adds to b the nodes of bounded loops' templates (see
// bounded) that are tasks of the DAGs in b: a bounded loop's task node is
// in there, named as the step's.
func loopBoundaries(wf *wfv1.Workflow, b map[string]bool) {
	loops := map[string]bool{}
	for _, t := range wf.Spec.Templates {
		if t.DAG != nil && t.Parallelism != nil && len(t.DAG.Tasks) == 1 {
			loops[t.Name] = true
		}
	}
	for id, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypeDAG && b[n.BoundaryID] && loops[n.TemplateName] {
			b[id] = true
		}
	}
}
