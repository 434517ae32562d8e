package argorun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/images"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/schedule"
)

// annotationScheduledTime is the annotation Argo's cron controller puts on
// each workflow it creates: the time it ran it for (RFC 3339).
const annotationScheduledTime = "workflows.argoproj.io/scheduled-time"

// Cron is a schedule to keep on Argo as a CronWorkflow, as `pipectl
// schedule create|apply --on argo` do: its images pinned, its code shipped,
// its Secrets checked, compiled like `run --on argo`'s workflow.
type Cron struct {
	Store    artifacts.Store
	Pipeline *pipeline.Pipeline
	Schedule *schedule.Schedule
	// Options compile the workflow; Compile sets Namespace and Images.
	Options argo.Options
	Pin     func(ctx context.Context, refs []string) (images.Result, error)
	Status  io.Writer
}

// Compile pins, ships and checks what the CronWorkflow's runs need and
// returns it compiled for the clients' namespace.
func (c *Cron) Compile(ctx context.Context, kc *Clients) (*wfv1.CronWorkflow, error) {
	p := c.Pipeline
	pinned, err := c.Pin(ctx, argo.Images(p, argo.Options{Image: c.Options.Image}))
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", c.Schedule.Name, err)
	}
	ao := c.Options
	ao.Namespace, ao.Images = kc.Namespace, pinned.Pinned
	if err := ao.Check(); err != nil {
		return nil, fmt.Errorf("compile %s: %w", c.Schedule.Pipeline, err)
	}
	params, err := p.ResolveParams(c.Schedule.RunParams(time.Now()))
	if err != nil {
		return nil, fmt.Errorf("schedule %s: params: %w", c.Schedule.Name, err)
	}
	if err := CheckSecrets(ctx, kc.Kube, kc.Namespace, p, params, func(msg string) { fmt.Fprintln(c.Status, msg) }); err != nil {
		return nil, fmt.Errorf("schedule %s: %w", c.Schedule.Name, err)
	}
	cw, err := argo.CompileCron(p, c.Schedule, ao)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", c.Schedule.Pipeline, err)
	}
	// The schedule as given, for `schedule ls|get --on argo`: the
	// CronWorkflow does not name the pipeline file or the policies' words.
	kept := *c.Schedule
	kept.Created, kept.Updated, kept.Suspended = time.Time{}, time.Time{}, false
	b, err := json.Marshal(&kept)
	if err != nil {
		return nil, err
	}
	cw.Annotations = map[string]string{AnnotationSchedule: string(b)}
	// The pods run this checkout's code, fetched from the store.
	if err := ShipCode(ctx, c.Store, p, c.Status); err != nil {
		return nil, err
	}
	return cw, nil
}

// AnnotationSchedule is, on a CronWorkflow pipectl made, its schedule
// (JSON; no times, no suspension: the CronWorkflow's own).
const AnnotationSchedule = "pipectl.dev/schedule"

// CronSchedule is the schedule of CronWorkflow cw, as its annotation
// keeps it, with cw's suspension.
func CronSchedule(cw *wfv1.CronWorkflow) (*schedule.Schedule, error) {
	var s schedule.Schedule
	v, ok := cw.Annotations[AnnotationSchedule]
	if !ok {
		return nil, fmt.Errorf("CronWorkflow %s was not made by pipectl (no annotation %s)", cw.Name, AnnotationSchedule)
	}
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return nil, fmt.Errorf("CronWorkflow %s: annotation %s: %w", cw.Name, AnnotationSchedule, err)
	}
	s.Suspended, s.Created = cw.Spec.Suspend, cw.CreationTimestamp.Time
	return &s, nil
}

// CronExists is PutCron's error when create finds the CronWorkflow.
var CronExists = errors.New("exists")

// PutCron creates cw in the clients' namespace (create: an existing one is
// CronExists) or updates the existing one to match it (its suspension
// too). It returns what it did:
// "created", "configured" or "unchanged".
func PutCron(ctx context.Context, kc *Clients, cw *wfv1.CronWorkflow, create bool) (string, error) {
	api := kc.Workflows.ArgoprojV1alpha1().CronWorkflows(kc.Namespace)
	old, err := api.Get(ctx, cw.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := api.Create(ctx, cw, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("schedule %s: %w", cw.Name, err)
		}
		return "created", nil
	case err != nil:
		return "", fmt.Errorf("schedule %s: %w", cw.Name, err)
	case create:
		return "", fmt.Errorf("schedule %s in namespace %s: %w", cw.Name, kc.Namespace, CronExists)
	}
	if reflect.DeepEqual(old.Spec, cw.Spec) && reflect.DeepEqual(old.Labels, cw.Labels) && reflect.DeepEqual(old.Annotations, cw.Annotations) {
		return "unchanged", nil
	}
	next := old.DeepCopy()
	next.Spec, next.Labels, next.Annotations = cw.Spec, cw.Labels, cw.Annotations
	if _, err := api.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("schedule %s: %w", cw.Name, err)
	}
	return "configured", nil
}

// ScheduledRuns returns the runs of the CronWorkflow name, newest
// scheduled time first, and records them in the store as `run --on argo`
// would: the cron controller's workflows have no pipectl process writing
// their records, so whoever looks at the schedule with the cluster at hand
// writes each run's record (schedule and scheduled time from the
// workflow), and its final record once the workflow ended. A run whose
// final record is in the store is read from there (its workflow may be
// gone).
func ScheduledRuns(ctx context.Context, kc *Clients, store artifacts.Store, name string) ([]*record.Run, error) {
	list, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: argo.LabelSchedule + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("schedule %s: its workflows: %w", name, err)
	}
	var runs []*record.Run
	for i := range list.Items {
		rec, err := ScheduledRecord(ctx, store, &list.Items[i])
		if err != nil {
			return nil, err
		}
		runs = append(runs, rec)
	}
	slices.SortFunc(runs, func(a, b *record.Run) int {
		if c := -cmpString(a.ScheduledTime, b.ScheduledTime); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	return runs, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ScheduledRecord brings the record of a CronWorkflow's workflow wf up to
// date in the store (written when the store has none, or a Running one)
// and returns it.
func ScheduledRecord(ctx context.Context, store artifacts.Store, wf *wfv1.Workflow) (*record.Run, error) {
	rec, err := recordstore.ReadRun(ctx, store, wf.Name)
	if err == nil && rec.Status != record.StatusRunning {
		return rec, nil
	}
	if err != nil {
		if !errors.Is(err, artifacts.ErrNotFound) {
			return nil, fmt.Errorf("run %s: %w", wf.Name, err)
		}
		if rec, err = RecordFromWorkflow(wf); err != nil {
			return nil, fmt.Errorf("run %s: %w", wf.Name, err)
		}
		rec.Started = wf.CreationTimestamp.Time
		rec.Schedule = wf.Labels[argo.LabelSchedule]
		rec.ScheduledTime = wf.Annotations[annotationScheduledTime]
		if t, err := time.Parse(time.RFC3339, rec.ScheduledTime); err == nil {
			rec.ScheduledTime = schedule.FormatTime(t)
		}
	}
	if err := Record(ctx, store, rec, wf); err != nil {
		return nil, fmt.Errorf("run %s: %w", wf.Name, err)
	}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		return nil, fmt.Errorf("run %s: %w", wf.Name, err)
	}
	return rec, nil
}

// CronStatus is what Argo says of a CronWorkflow: its last scheduled time
// (RFC 3339, "" before it first fired) and whether it is suspended.
func CronStatus(cw *wfv1.CronWorkflow) (last string, suspended bool) {
	if t := cw.Status.LastScheduledTime; t != nil {
		last = schedule.FormatTime(t.Time.UTC())
	}
	return last, cw.Spec.Suspend
}

// RecordItself is what a CronWorkflow's workflow runs to record its own
// run (`pipectl schedule record-run`, see argo.CompileCron): with status
// Running, as it starts, the record ScheduledRecord writes, unless the
// store has one; with the workflow's final status, from its exit handler
// (the workflow still Running then), its final record: the steps from the
// workflow, the run's status that one (Failed when a finally step
// failed), finished now. The same record the readers write.
func RecordItself(ctx context.Context, kc *Clients, store artifacts.Store, name, status string, now time.Time) (*record.Run, error) {
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("workflow %s in namespace %s: %w", name, kc.Namespace, err)
	}
	phase := wfv1.WorkflowPhase(status)
	switch phase {
	case wfv1.WorkflowRunning, wfv1.WorkflowPending, "":
		if rec, err := recordstore.ReadRun(ctx, store, name); err == nil {
			return rec, nil
		}
		return ScheduledRecord(ctx, store, wf)
	case wfv1.WorkflowSucceeded, wfv1.WorkflowFailed, wfv1.WorkflowError:
	default:
		return nil, fmt.Errorf("status %q: want Running, Succeeded, Failed or Error", status)
	}
	ended := wf.DeepCopy()
	ended.Status.Phase = phase
	if ended.Status.FinishedAt.IsZero() {
		ended.Status.FinishedAt = metav1.NewTime(now)
	}
	rec, err := ScheduledRecord(ctx, store, ended)
	if err != nil || rec.Status != record.StatusSucceeded {
		return rec, err
	}
	for _, s := range rec.Steps {
		if s.Status == record.StatusFailed {
			rec.Status, rec.Message = record.StatusFailed, "step "+s.Name+" failed"
			return rec, recordstore.WriteRun(ctx, store, rec)
		}
	}
	return rec, nil
}
