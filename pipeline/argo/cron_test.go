package argo

import (
	"context"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"

	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/schedule"
)

const cronPipeline = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nightly}
params:
  epochs: {type: int, default: 1}
steps:
  - name: say
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: say}
      inputs: [{name: at, type: string}, {name: epochs, type: int}]
      image: example/say:1
      command: [echo, "{{inputs.at}}", "{{inputs.epochs}}"]
    inputs: {at: "night of {{run.scheduledTime}}", epochs: "{{params.epochs}}"}
  - name: plain
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: plain}
      image: example/plain:1
      command: [echo, plain]
`

// scheduledArg is the --scheduled-time argument of the template of step
// task, "" when it has none.
func scheduledArg(t *testing.T, spec *wfv1.WorkflowSpec, task string) string {
	t.Helper()
	var tmpl string
	for _, tk := range spec.Templates[0].DAG.Tasks {
		if tk.Name == task {
			tmpl = tk.Template
		}
	}
	for _, tp := range spec.Templates {
		if tp.Name == tmpl && tp.Container != nil {
			for _, a := range tp.Container.Args {
				if v, ok := strings.CutPrefix(a, "--scheduled-time="); ok {
					return v
				}
			}
			return ""
		}
	}
	t.Fatalf("no template of task %s", task)
	return ""
}

// TestCompileCron: a schedule compiles to a CronWorkflow Argo's own
// validation accepts, on the schedule's cron, zone and policies; the step
// that reads {{run.scheduledTime}} gets Argo's scheduled time, the other
// none; a workflow submitted by hand gets its creation time there.
func TestCompileCron(t *testing.T) {
	p, err := pipeline.Parse("nightly.yaml", []byte(cronPipeline))
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Name: "nightly", Pipeline: "nightly.yaml", Cron: "0 2 * * *", Timezone: "Europe/Berlin", Params: map[string]string{"epochs": "3"}, Concurrency: schedule.ConcurrencyForbid}
	s.Default()
	cw, err := CompileCron(p, s, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.ValidateCronWorkflow(context.Background(), nil, nil, cw.DeepCopy(), nil); err != nil {
		t.Fatalf("Argo's validation: %v", err)
	}
	spec := cw.Spec
	if !slices.Equal(spec.Schedules, []string{"0 2 * * *"}) || spec.Timezone != "Europe/Berlin" || spec.ConcurrencyPolicy != wfv1.ForbidConcurrent ||
		spec.StartingDeadlineSeconds == nil || *spec.StartingDeadlineSeconds != LatestDeadline || spec.Suspend || cw.Name != "nightly" || cw.Namespace != "ml" {
		t.Errorf("CronWorkflow %s/%s spec: %+v", cw.Namespace, cw.Name, spec)
	}
	if cw.Labels[LabelSchedule] != "nightly" || spec.WorkflowMetadata.Labels[LabelSchedule] != "nightly" {
		t.Errorf("labels %v, workflow labels %v", cw.Labels, spec.WorkflowMetadata.Labels)
	}
	if got := scheduledArg(t, &spec.WorkflowSpec, "say"); got != "{{workflow.scheduledTime}}" {
		t.Errorf("say's --scheduled-time = %q, want {{workflow.scheduledTime}}", got)
	}
	if got := scheduledArg(t, &spec.WorkflowSpec, "plain"); got != "" {
		t.Errorf("plain reads no scheduled time, got --scheduled-time=%q", got)
	}
	var epochs string
	for _, a := range spec.WorkflowSpec.Arguments.Parameters {
		if a.Name == "epochs" {
			epochs = a.Value.String()
		}
	}
	if epochs != "3" {
		t.Errorf("the schedule's param epochs = %q, want 3", epochs)
	}

	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	if got := scheduledArg(t, &wf.Spec, "say"); got != "{{workflow.creationTimestamp.RFC3339}}" {
		t.Errorf("by hand: say's --scheduled-time = %q", got)
	}

	none := *s
	none.CatchUp = schedule.CatchUpNone
	if cw, err := CompileCron(p, &none, testOptions()); err != nil || cw.Spec.StartingDeadlineSeconds != nil {
		t.Errorf("catch-up none: %v, deadline %v", err, cw.Spec.StartingDeadlineSeconds)
	}
	all := *s
	all.CatchUp = schedule.CatchUpAll
	if _, err := CompileCron(p, &all, testOptions()); err == nil || !strings.Contains(err.Error(), "catchUp: all is not supported on Argo") {
		t.Errorf("catch-up all: %v", err)
	}
	ref := *s
	ref.Params = map[string]string{"epochs": schedule.ScheduledTimeRef}
	if _, err := CompileCron(p, &ref, testOptions()); err == nil || !strings.Contains(err.Error(), "params.epochs") {
		t.Errorf("a param with the scheduled time: %v", err)
	}
	bad := *s
	bad.Timezone = "Mars/Olympus"
	if _, err := CompileCron(p, &bad, testOptions()); err == nil || !strings.Contains(err.Error(), "timezone") {
		t.Errorf("a bad zone: %v", err)
	}
}
