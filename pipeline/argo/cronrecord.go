package argo

import (
	"cmp"
	"fmt"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/wire"
)

// Names of the parts of a CronWorkflow's workflow that record its run.
const (
	// RecordTemplate is the template of the pod that writes the run's
	// record (wire.RecordRun); RecordTask its task in the finally DAG.
	RecordTemplate = "pipectl-record-run"
	RecordTask     = RecordTemplate
	// RecordStatusInput is its input: the run's status (Running at the
	// start, {{workflow.status}} at the end).
	RecordStatusInput = "status"
	// RecordHook is the workflow's lifecycle hook that records the run
	// as it starts.
	RecordHook = "running"
)

// addRecording makes the workflow wf of a CronWorkflow record its own run
// in the store, as no pipectl process follows it: a lifecycle hook writes
// the Running record when it starts, and its exit handler (after the
// finally steps, when it has some) writes the final one. Both run the
// pipectl image under the launcher's ServiceAccount, which may read the
// workflow.
func (c *compiler) addRecording(wf *wfv1.Workflow) error {
	for _, t := range wf.Spec.Templates {
		if t.Name == RecordTemplate {
			return fmt.Errorf("a step's template is named %s, which a schedule's workflow needs for itself: rename the step", RecordTemplate)
		}
		for _, task := range dagTasks(t) {
			if task.Name == RecordTask {
				return fmt.Errorf("step %s: the name is one a schedule's workflow needs for itself: rename the step", RecordTask)
			}
		}
	}
	flag := func(name, v string) string { return "--" + name + "=" + v }
	wf.Spec.Templates = append(wf.Spec.Templates, wfv1.Template{
		Name:               RecordTemplate,
		Inputs:             wfv1.Inputs{Parameters: []wfv1.Parameter{{Name: RecordStatusInput}}},
		ServiceAccountName: cmp.Or(c.opts.LauncherServiceAccount, DefaultLauncherServiceAccount),
		Container: &corev1.Container{
			Image:   c.opts.Image,
			Command: append([]string{wire.Binary}, wire.RecordRun...),
			Args: []string{
				flag(wire.RecordRunFlagRun, "{{workflow.name}}"),
				flag(wire.RecordRunFlagNamespace, "{{workflow.namespace}}"),
				flag(wire.RecordRunFlagStatus, "{{inputs.parameters."+RecordStatusInput+"}}"),
			},
			Env: c.storeEnv(),
		},
	})
	status := func(v string) wfv1.Arguments {
		return wfv1.Arguments{Parameters: []wfv1.Parameter{{Name: RecordStatusInput, Value: wfv1.AnyStringPtr(v)}}}
	}
	wf.Spec.Hooks = wfv1.LifecycleHooks{RecordHook: {
		Template: RecordTemplate, Arguments: status(string(wfv1.WorkflowRunning)),
		Expression: `workflow.status == "Running"`,
	}}
	if wf.Spec.OnExit == "" {
		// No finally steps: the exit hook is the record's pod.
		wf.Spec.Hooks[wfv1.ExitLifecycleEvent] = wfv1.LifecycleHook{Template: RecordTemplate, Arguments: status("{{workflow.status}}")}
		return nil
	}
	// After every finally step, whatever its outcome.
	for i := range wf.Spec.Templates {
		t := &wf.Spec.Templates[i]
		if t.Name != wf.Spec.OnExit || t.DAG == nil {
			continue
		}
		var ended []string
		for _, task := range t.DAG.Tasks {
			n := task.Name
			ended = append(ended, "("+n+".Succeeded || "+n+".Failed || "+n+".Errored || "+n+".Skipped || "+n+".Omitted)")
		}
		t.DAG.Tasks = append(t.DAG.Tasks, wfv1.DAGTask{
			Name: RecordTask, Template: RecordTemplate, Depends: strings.Join(ended, " && "),
			Arguments: status("{{workflow.status}}"),
		})
		if t.DAG.Target != "" {
			t.DAG.Target += " " + RecordTask
		}
	}
	return nil
}

// dagTasks are the tasks of t, a DAG template (none for another).
func dagTasks(t wfv1.Template) []wfv1.DAGTask {
	if t.DAG == nil {
		return nil
	}
	return t.DAG.Tasks
}
