package argo

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/schedule"
)

// LabelSchedule names, on a CronWorkflow's workflows, the schedule that
// made them.
const LabelSchedule = "pipectl.dev/schedule"

// LatestDeadline is the CronWorkflow's startingDeadlineSeconds for
// catch-up latest: Argo runs the newest missed time when it is at most a
// day late.
const LatestDeadline = 24 * 60 * 60

// scheduledTime is the Argo placeholder of {{run.scheduledTime}}: the
// time Argo's cron controller ran a CronWorkflow's workflow for, or, for a
// workflow submitted by hand, its creation time (UTC), as locally.
func (c *compiler) scheduledTime() string {
	if c.cron {
		return "{{workflow.scheduledTime}}"
	}
	return "{{workflow.creationTimestamp.RFC3339}}"
}

// CompileCron compiles schedule s of pipeline p into an Argo CronWorkflow:
// the workflow Compile makes, fired on s's cron in its time zone, its
// policies mapped to Argo's (catch-up all has no Argo form: a backfill
// runs missed times). Pure, like Compile.
func CompileCron(p *pipeline.Pipeline, s *schedule.Schedule, opts Options) (*wfv1.CronWorkflow, error) {
	if err := CheckCron(s); err != nil {
		return nil, err
	}
	var deadline *int64
	if s.CatchUp == schedule.CatchUpLatest {
		deadline = new(int64(LatestDeadline))
	}
	params := maps.Clone(opts.Params)
	if params == nil {
		params = map[string]string{}
	}
	maps.Copy(params, s.Params)
	opts.Params = params
	wf, err := compile(p, opts, true)
	if err != nil {
		return nil, err
	}
	c := &compiler{opts: opts}
	c.opts.Image = pin(opts.Images, opts.Image)
	if err := c.addRecording(wf); err != nil {
		return nil, err
	}
	labels := maps.Clone(wf.Labels)
	labels[LabelSchedule] = s.Name
	wf.Spec.PodMetadata.Labels[LabelSchedule] = s.Name
	return &wfv1.CronWorkflow{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "CronWorkflow"},
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Name, Namespace: opts.Namespace, Labels: labels,
		},
		Spec: wfv1.CronWorkflowSpec{
			Schedules:               []string{s.Cron},
			Timezone:                s.Timezone,
			ConcurrencyPolicy:       wfv1.ConcurrencyPolicy(s.Concurrency),
			Suspend:                 s.Suspended,
			StartingDeadlineSeconds: deadline,
			WorkflowMetadata: &metav1.ObjectMeta{
				Labels:      labels,
				Annotations: map[string]string{wire.AnnotationSteps: wf.Annotations[wire.AnnotationSteps]},
			},
			WorkflowSpec: wf.Spec,
		},
	}, nil
}

// CheckCron says whether schedule s can be an Argo CronWorkflow: valid,
// with no {{run.scheduledTime}} in a param value (a CronWorkflow's params
// are fixed) and a catch-up Argo has (not all).
func CheckCron(s *schedule.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(s.Params)) {
		if strings.Contains(s.Params[name], schedule.ScheduledTimeRef) {
			return fmt.Errorf("params.%s: %s in a param value is not supported on Argo: read {{run.scheduledTime}} in the step's inputs instead", name, schedule.ScheduledTimeRef)
		}
	}
	if s.CatchUp == schedule.CatchUpAll {
		return fmt.Errorf("catchUp: all is not supported on Argo, whose cron controller runs at most the latest missed time: use latest, and 'pipectl schedule backfill' for the others")
	}
	return nil
}
