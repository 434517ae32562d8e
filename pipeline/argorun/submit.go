package argorun

import (
	"context"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Submit compiles p with opts, creates the workflow in the clients'
// namespace and writes the run's record (params are the run's parameter
// values, source the pipeline file, org where it came from).
func Submit(ctx context.Context, kc *Clients, store artifacts.Store, p *pipeline.Pipeline, params map[string]string, source string, org *record.Origin, opts argo.Options) (*record.Run, *wfv1.Workflow, error) {
	compiled, err := argo.Compile(p, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("compile %s: %w", source, err)
	}
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Create(ctx, compiled, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("submit %s: %w", source, err)
	}
	rec := NewRecord(p, wf, params, source, time.Now())
	rec.Origin = org
	origin.Steps(rec, p, true, opts.Images)
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		return nil, nil, fmt.Errorf("workflow %s submitted, but its run record: %w", wf.Name, err)
	}
	if err := origin.WriteResolved(ctx, store, wf.Name, p); err != nil {
		return nil, nil, fmt.Errorf("workflow %s submitted, but its resolved pipeline: %w", wf.Name, err)
	}
	return rec, wf, nil
}

// Complete writes the record of a followed run whose workflow wf ended:
// the logs the follower streamed (the launcher steps' are kept nowhere
// else), the steps and the run's status. A failure to store the logs is
// reported to warn.
func Complete(ctx context.Context, store artifacts.Store, rec *record.Run, wf *wfv1.Workflow, fl *Follower, warn func(error)) error {
	if err := fl.StoreLogs(ctx, store); err != nil {
		warn(err)
	}
	if err := Record(ctx, store, rec, wf); err != nil {
		return err
	}
	return recordstore.WriteRun(ctx, store, rec)
}

// Deleted ends the record of a run whose workflow was deleted while it was
// followed: nobody can complete it later, so it ends here, Cancelled, with
// what was seen of wf (nil when nothing was).
func Deleted(ctx context.Context, store artifacts.Store, rec *record.Run, wf *wfv1.Workflow) error {
	if wf != nil {
		_ = Record(ctx, store, rec, wf)
	}
	now := time.Now()
	rec.Status, rec.Finished, rec.Message = record.StatusCancelled, &now, "the workflow was deleted"
	for i := range rec.Steps {
		if s := &rec.Steps[i]; s.Status == record.StatusRunning || s.Status == record.StatusPending {
			s.Status = record.StatusCancelled
		}
	}
	return recordstore.WriteRun(ctx, store, rec)
}
