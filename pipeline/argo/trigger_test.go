package argo

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// TestTriggerCompleted: a step with trigger: completed depends on each of
// its upstream tasks having ended in any phase (Omitted: its own
// dependencies did not succeed), and gets their outputs from their outputs
// records, not as Argo parameters (a failed task has none); a DAG with
// such a step targets every task, so that it fails when any task failed
// (Argo's DAG otherwise takes its phase from the leaf tasks' branches,
// which the step's success would make succeed).
func TestTriggerCompleted(t *testing.T) {
	wf, _ := compileFile(t, "testdata/completed.yaml", testOptions())
	lint(t, wf)
	dags := map[string]*wfv1.DAGTemplate{}
	tmpl := map[string]*wfv1.Template{}
	for i := range wf.Spec.Templates {
		tp := &wf.Spec.Templates[i]
		tmpl[tp.Name] = tp
		if tp.DAG != nil {
			dags[tp.Name] = tp.DAG
		}
	}
	task := func(dag, name string) wfv1.DAGTask {
		t.Helper()
		for _, tk := range dags[dag].Tasks {
			if tk.Name == name {
				return tk
			}
		}
		t.Fatalf("DAG %s has no task %s", dag, name)
		return wfv1.DAGTask{}
	}
	for _, c := range []struct{ dag, task, depends string }{
		{EntryTemplate, "cleanup", "(make.Succeeded || make.Failed || make.Errored || make.Skipped || make.Omitted)"},
		{EntryTemplate, "report", "cleanup.Succeeded"},
		{ExitTemplate, "log", "(notify.Succeeded || notify.Failed || notify.Errored || notify.Skipped || notify.Omitted)"},
	} {
		if got := task(c.dag, c.task).Depends; got != c.depends {
			t.Errorf("%s depends %q, want %q", c.task, got, c.depends)
		}
	}
	if got, want := dags[EntryTemplate].Target, "make cleanup report"; got != want {
		t.Errorf("main target %q, want %q", got, want)
	}
	if got, want := dags[ExitTemplate].Target, "notify log"; got != want {
		t.Errorf("finally target %q, want %q", got, want)
	}
	cleanup := task(EntryTemplate, "cleanup")
	for _, prm := range cleanup.Arguments.Parameters {
		if strings.HasPrefix(prm.Name, UpstreamInputPrefix) {
			t.Errorf("cleanup gets %s = %s: its upstream outputs come from the outputs records", prm.Name, prm.Value)
		}
	}
	for _, prm := range tmpl[cleanup.Template].Inputs.Parameters {
		if strings.HasPrefix(prm.Name, UpstreamInputPrefix) {
			t.Errorf("cleanup's template has input %s", prm.Name)
		}
	}

	// Without the trigger, the DAG keeps Argo's default target (its leaves).
	wf, _ = compileFile(t, "testdata/when.yaml", testOptions())
	for _, tp := range wf.Spec.Templates {
		if tp.DAG != nil && tp.DAG.Target != "" {
			t.Errorf("when.yaml: DAG %s has target %q, want none", tp.Name, tp.DAG.Target)
		}
	}
}
