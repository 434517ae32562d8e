package argo

import (
	"context"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/schedule"
)

// TestCronRecordsItself: a schedule's workflow records its own run: a
// Running hook and, at its end, the exit hook (no finally steps) or a last
// task of the finally DAG after every finally step, each running
// `pipectl schedule record-run` in the pipectl image under the launcher's
// ServiceAccount with the store's env; Argo's validation accepts both; a
// workflow submitted by hand has none of it.
func TestCronRecordsItself(t *testing.T) {
	s := &schedule.Schedule{Name: "nightly", Pipeline: "nightly.yaml", Cron: "0 2 * * *"}
	s.Default()
	compileCron := func(src string) *wfv1.CronWorkflow {
		t.Helper()
		p, err := pipeline.Parse("nightly.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		cw, err := CompileCron(p, s, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.ValidateCronWorkflow(context.Background(), nil, nil, cw.DeepCopy(), nil); err != nil {
			t.Fatalf("Argo's validation: %v", err)
		}
		return cw
	}
	cw := compileCron(cronPipeline)
	spec := &cw.Spec.WorkflowSpec
	var rec *wfv1.Template
	for i := range spec.Templates {
		if spec.Templates[i].Name == RecordTemplate {
			rec = &spec.Templates[i]
		}
	}
	if rec == nil || rec.Container == nil {
		t.Fatalf("no template %s", RecordTemplate)
	}
	if want := append([]string{wire.Binary}, wire.RecordRun...); !slices.Equal(rec.Container.Command, want) || rec.ServiceAccountName != DefaultLauncherServiceAccount || rec.Container.Image != testOptions().Image {
		t.Errorf("record pod: command %v, service account %q, image %q", rec.Container.Command, rec.ServiceAccountName, rec.Container.Image)
	}
	if args := strings.Join(rec.Container.Args, " "); args != "--run={{workflow.name}} --namespace={{workflow.namespace}} --status={{inputs.parameters.status}}" {
		t.Errorf("record pod args: %s", args)
	}
	if !slices.ContainsFunc(rec.Container.Env, func(e corev1.EnvVar) bool { return e.Name == wire.EnvRoot }) {
		t.Errorf("record pod env has no %s: %v", wire.EnvRoot, rec.Container.Env)
	}
	start, end := spec.Hooks[RecordHook], spec.Hooks[wfv1.ExitLifecycleEvent]
	if start.Template != RecordTemplate || start.Expression != `workflow.status == "Running"` || start.Arguments.Parameters[0].Value.String() != "Running" ||
		end.Template != RecordTemplate || end.Arguments.Parameters[0].Value.String() != "{{workflow.status}}" || spec.OnExit != "" {
		t.Errorf("hooks %+v, onExit %q", spec.Hooks, spec.OnExit)
	}

	// With finally steps: the finally DAG's last task.
	cw = compileCron(cronPipeline + `finally:
  - name: report
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: report}
      image: example/plain:1
      command: [echo, done]
`)
	spec = &cw.Spec.WorkflowSpec
	if _, ok := spec.Hooks[wfv1.ExitLifecycleEvent]; ok || spec.OnExit != ExitTemplate {
		t.Fatalf("with finally steps: hooks %+v, onExit %q", spec.Hooks, spec.OnExit)
	}
	var last wfv1.DAGTask
	for _, tp := range spec.Templates {
		if tp.Name == ExitTemplate {
			last = tp.DAG.Tasks[len(tp.DAG.Tasks)-1]
		}
	}
	if last.Name != RecordTask || last.Template != RecordTemplate || !strings.Contains(last.Depends, "report.Failed") || last.Arguments.Parameters[0].Value.String() != "{{workflow.status}}" {
		t.Errorf("finally's last task: %+v", last)
	}

	p, err := pipeline.Parse("nightly.yaml", []byte(cronPipeline))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.Spec.Hooks) > 0 || slices.ContainsFunc(wf.Spec.Templates, func(t wfv1.Template) bool { return t.Name == RecordTemplate }) {
		t.Errorf("a workflow submitted by hand records itself: %+v", wf.Spec.Hooks)
	}
}
