package argorun

import (
	"context"
	"fmt"
	"io"
	"maps"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/images"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Start is a run to start on Argo, as `pipectl run --on argo FILE` does:
// every image pinned, the code shipped, every step looked up in the cache
// (all cached: the run ends there, with no workflow), else submitted.
type Start struct {
	Store    artifacts.Store
	Pipeline *pipeline.Pipeline
	// Params are every parameter's value; Source the pipeline file as
	// the record names it.
	Params map[string]string
	Source string
	// Options compile the workflow; Start sets Namespace and Images.
	Options argo.Options
	// NoCache runs every step.
	NoCache bool
	// Origin is where the run came from (origin.Of); Start adds whether
	// images kept their tags and the pipeline's pack.
	Origin *record.Origin
	// Pin resolves image references (images.Resolve with the user's
	// registries, or keeping tags).
	Pin func(ctx context.Context, refs []string) (images.Result, error)
	// Status gets what Start did (code shipped, the run cached).
	Status io.Writer
	// Import reads the objects outside the store that artifact params
	// name (gs://, s3://, oci://), imported into Store before the workflow is
	// submitted (pipeline/imports): the pods read the copies.
	Import imports.Options
}

// Run starts the run and returns its record and workflow (nil when every
// step was cached: the record is then final).
func (s *Start) Run(ctx context.Context, connect Connect) (*record.Run, *wfv1.Workflow, error) {
	p := s.Pipeline
	// Every image pinned first: the cache lookup and the workflow see the
	// digests the pods will run.
	pinned, err := s.Pin(ctx, argo.Images(p, argo.Options{Image: s.Options.Image}))
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Source, err)
	}
	kc, err := connect()
	if err != nil {
		return nil, nil, err
	}
	// The pods read what the artifact params name outside the store from
	// its copy in the store.
	params, err := imports.Resolve(ctx, s.Store, p, s.Params, s.Import, func(format string, args ...any) { fmt.Fprintf(s.Status, format, args...) })
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Source, err)
	}
	for name, v := range params {
		if v != s.Params[name] {
			// The workflow's argument: it holds the overrides only.
			s.Options.Params = maps.Clone(s.Options.Params)
			if s.Options.Params == nil {
				s.Options.Params = map[string]string{}
			}
			s.Options.Params[name] = v
		}
	}
	s.Params = params
	ao := s.Options
	ao.Namespace, ao.Images = kc.Namespace, pinned.Pinned
	if err := ao.Check(); err != nil {
		return nil, nil, fmt.Errorf("compile %s: %w", s.Source, err)
	}
	// The pods run this checkout's code, fetched from the store.
	if err := ShipCode(ctx, s.Store, p, s.Status); err != nil {
		return nil, nil, err
	}
	o := *s.Origin
	org := &o
	org.ImageTags = pinned.KeptTags
	// The pipeline as it runs, kept for a rerun (a rerun keeps the pack
	// it runs).
	if org.Pipeline == nil {
		if org.Pipeline, err = origin.ShipPipeline(ctx, s.Store, p, codepack.Defaults); err != nil {
			fmt.Fprintf(s.Status, "Warning: the pipeline is not kept with the run (no rerun of it): %v\n", err)
		}
	}
	if !s.NoCache {
		// Every step known and cached before it runs: no workflow.
		rec, err := CachedRun(ctx, s.Store, p, s.Params, s.Source, kc.Namespace, org, pinned.Pinned)
		if err != nil || rec != nil {
			if rec != nil {
				fmt.Fprintf(s.Status, "Every step is cached: run %s reuses their outputs (artifacts %s); no workflow submitted\n", rec.ID, s.Store.URI(rec.ID))
			}
			return rec, nil, err
		}
	}
	// A pod whose Secret is missing would wait for it: checked first.
	if err := CheckSecrets(ctx, kc.Kube, kc.Namespace, p, s.Params, func(msg string) { fmt.Fprintln(s.Status, msg) }); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Source, err)
	}
	rec, wf, err := Submit(ctx, kc, s.Store, p, s.Params, s.Source, org, ao)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(s.Status, "Submitted workflow %s in namespace %s (artifacts %s)\n", wf.Name, kc.Namespace, s.Store.URI(wf.Name))
	return rec, wf, nil
}

// Attach finds the workflow of run name (or of the newest run, "latest")
// to follow it again, with its run's record (or one made from the
// workflow when the store has none). The store's record names the run's
// namespace, which connect is given ("" when unknown); status is told
// what Attach follows.
func Attach(ctx context.Context, store artifacts.Store, name string, connect func(namespace string) (*Clients, error), status io.Writer) (*record.Run, *wfv1.Workflow, *Clients, error) {
	namespace := ""
	if r, err := recordstore.StoredRun(ctx, store, name, status); err == nil {
		name, namespace = r.ID, r.Namespace
	} else if name == record.LatestRun {
		return nil, nil, nil, err
	}
	kc, err := connect(namespace)
	if err != nil {
		return nil, nil, nil, err
	}
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("attach %s: %w", name, err)
	}
	rec, err := recordstore.ReadRun(ctx, store, wf.Name)
	if err != nil {
		if rec, err = RecordFromWorkflow(wf); err != nil {
			return nil, nil, nil, fmt.Errorf("attach %s: %w", wf.Name, err)
		}
	}
	fmt.Fprintf(status, "Following workflow %s in namespace %s\n", wf.Name, kc.Namespace)
	return rec, wf, kc, nil
}
