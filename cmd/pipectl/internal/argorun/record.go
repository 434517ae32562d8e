package argorun

import (
	"context"
	"errors"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

// On is the run record's "on" of cluster runs.
const On = "argo"

// NewRecord is the record of a run just submitted: Running, every step Pending.
func NewRecord(p *pipeline.Pipeline, wf *wfv1.Workflow, params map[string]string, source string, now time.Time) *artifacts.Run {
	rec := &artifacts.Run{
		ID: wf.Name, Pipeline: p.Metadata.Name, Status: artifacts.StatusRunning,
		Started: now, Source: source, On: On, Params: params,
	}
	if !wf.CreationTimestamp.IsZero() {
		rec.Started = wf.CreationTimestamp.Time
	}
	for _, s := range p.Steps {
		rec.Steps = append(rec.Steps, artifacts.StepRecord{Name: s.Name, Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}})
	}
	return rec
}

// RecordFromWorkflow is the record of a run known only by its workflow
// (attached to, with no record in the store): its steps are the DAG's tasks.
func RecordFromWorkflow(wf *wfv1.Workflow) *artifacts.Run {
	rec := &artifacts.Run{ID: wf.Name, Pipeline: wf.Labels[argo.LabelPipeline], Status: artifacts.StatusRunning, On: On, Params: map[string]string{}}
	if wf.Spec.Arguments.Parameters != nil {
		for _, p := range wf.Spec.Arguments.Parameters {
			if p.Value != nil {
				rec.Params[p.Name] = p.Value.String()
			}
		}
	}
	for _, t := range wf.Spec.Templates {
		if t.Name == argo.EntryTemplate && t.DAG != nil {
			for _, task := range t.DAG.Tasks {
				rec.Steps = append(rec.Steps, artifacts.StepRecord{Name: task.Name, Status: artifacts.StatusPending, Outputs: []artifacts.OutputRecord{}})
			}
		}
	}
	return rec
}

// Record brings rec up to date with wf and adds the artifact outputs of
// succeeded steps from their metadata in the store.
func Record(ctx context.Context, store artifacts.Store, rec *artifacts.Run, wf *wfv1.Workflow) error {
	argo.UpdateRecord(rec, wf)
	for i := range rec.Steps {
		s := &rec.Steps[i]
		if s.Status != artifacts.StatusSucceeded {
			continue
		}
		objs, err := store.List(ctx, rec.ID+"/"+s.Name+"/", false)
		if err != nil {
			return err
		}
		for _, o := range objs {
			key, ok := strings.CutSuffix(o.Key, ".meta.json")
			if o.Dir || !ok {
				continue
			}
			name := key[strings.LastIndex(key, "/")+1:]
			meta, err := artifacts.ReadMetadata(ctx, store, key)
			if err != nil {
				return err
			}
			out := artifacts.OutputRecord{Name: name, Type: meta.Type, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}
			replaced := false
			for j := range s.Outputs {
				if s.Outputs[j].Name == name {
					s.Outputs[j], replaced = out, true
				}
			}
			if !replaced {
				s.Outputs = append(s.Outputs, out)
			}
		}
	}
	return nil
}

// Refresh updates a Running cluster run's record from its workflow when the
// cluster is reachable and the workflow exists, and writes the record back
// once the workflow ended. It returns rec unchanged otherwise.
func Refresh(ctx context.Context, f *cmdutil.Factory, store artifacts.Store, rec *artifacts.Run) *artifacts.Run {
	if rec.On != On || rec.Status != artifacts.StatusRunning {
		return rec
	}
	kc, err := f.Clients()
	if err != nil {
		return rec
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	wf, err := findWorkflow(ctx, kc, rec.ID)
	if err != nil {
		return rec
	}
	next := *rec
	next.Steps = append([]artifacts.StepRecord(nil), rec.Steps...)
	if err := Record(ctx, store, &next, wf); err != nil {
		return rec
	}
	if next.Status != artifacts.StatusRunning {
		_ = artifacts.WriteRun(ctx, store, &next)
	}
	return &next
}

// findWorkflow gets a workflow by name in the namespace in effect.
func findWorkflow(ctx context.Context, kc *cmdutil.KubeClients, name string) (*wfv1.Workflow, error) {
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(kc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, errors.New("workflow " + name + " not found in namespace " + kc.Namespace)
	}
	return wf, err
}
