package argorun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// CachedRun is the run of p on the cluster when every step is cached and
// known before it runs (stepcache.ResolveAll): its record, every step
// reused, written to the store with each step's outputs record; no
// workflow is submitted and no pod starts. It returns nil when some step
// must run. org is where the run came from; images maps image references
// as written to the pinned ones the workflow would name
// (argo.Options.Images): the steps' fingerprints hold the image the pod runs.
func CachedRun(ctx context.Context, store artifacts.Store, p *pipeline.Pipeline, params map[string]string, source, namespace string, org *record.Origin, images map[string]string) (*record.Run, error) {
	var steps []*plan.Step
	for _, s := range p.Steps {
		sp, err := plan.Build(p, s.Name)
		if err != nil {
			return nil, nil // the compiler reports it
		}
		if pinned, ok := images[sp.Image]; ok && pinned != "" {
			sp.Image = pinned
		}
		steps = append(steps, sp)
	}
	for {
		now := time.Now().UTC()
		id := local.NewRunID(p.Metadata.Name, now)
		entries, ok, err := stepcache.ResolveAll(ctx, store, steps, id, params)
		if err != nil || !ok {
			return nil, err
		}
		rec := &record.Run{ID: id, Pipeline: p.Metadata.Name, Status: record.StatusRunning, Started: now,
			Source: source, On: On, Namespace: namespace, Params: params, Origin: org}
		for _, s := range p.Steps {
			rec.Steps = append(rec.Steps, record.StepRecord{Name: s.Name, Status: record.StatusPending, DependsOn: s.Deps()})
		}
		origin.Steps(rec, p, true, images)
		err = recordstore.CreateRun(ctx, store, rec)
		if errors.Is(err, fs.ErrExist) {
			continue // the id is taken: draw another
		}
		if err != nil {
			return nil, err
		}
		if err := origin.WriteResolved(ctx, store, id, p); err != nil {
			err = fmt.Errorf("run %s: %w", id, err)
			return nil, errors.Join(err, finishRecord(ctx, store, rec, record.StatusFailed, err.Error()))
		}
		// The record says Succeeded only once every step's outputs record
		// is written: a reader never sees a finished run whose outputs
		// are not there yet.
		for i, s := range p.Steps {
			e, code := entries[s.Name], 0
			if err := stepcache.Reuse(ctx, store, id, s.Name, "", e); err != nil {
				err = fmt.Errorf("run %s: step %s: %w", id, s.Name, err)
				return nil, errors.Join(err, finishRecord(ctx, store, rec, record.StatusFailed, err.Error()))
			}
			done := time.Now().UTC()
			rec.Steps[i] = record.StepRecord{
				Name: s.Name, Status: record.StatusSucceeded, DependsOn: s.Deps(), ExitCode: &code,
				Code: rec.Steps[i].Code, Image: rec.Steps[i].Image,
				Started: &now, Finished: &done, Cached: true, CachedFrom: e.Run, Outputs: e.Outputs,
				Message: "outputs reused from run " + e.Run,
			}
		}
		return rec, finishRecord(ctx, store, rec, record.StatusSucceeded, "")
	}
}

// finishRecord writes rec as ended with status and message.
func finishRecord(ctx context.Context, store artifacts.Store, rec *record.Run, status, message string) error {
	end := time.Now().UTC()
	rec.Status, rec.Message, rec.Finished = status, message, &end
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		return fmt.Errorf("run %s: write its record: %w", rec.ID, err)
	}
	return nil
}
