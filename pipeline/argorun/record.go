package argorun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// On is the run record's "on" of cluster runs.
const On = "argo"

// NewRecord is the record of a run just submitted: Running, every step Pending.
func NewRecord(p *pipeline.Pipeline, wf *wfv1.Workflow, params map[string]string, source string, now time.Time) *record.Run {
	rec := &record.Run{
		ID: wf.Name, Pipeline: p.Metadata.Name, Status: record.StatusRunning,
		Started: now, Source: source, On: On, Namespace: wf.Namespace, Params: params,
	}
	if !wf.CreationTimestamp.IsZero() {
		rec.Started = wf.CreationTimestamp.Time
	}
	for _, s := range p.Steps {
		rec.Steps = append(rec.Steps, record.StepRecord{Name: s.Name, Status: record.StatusPending, DependsOn: s.Deps(), Outputs: []record.OutputRecord{}})
	}
	return rec
}

// RecordFromWorkflow is the record of a run known only by its workflow
// (attached to, with no record in the store): its steps are those the
// workflow's step annotation names (argo.StepTasks).
func RecordFromWorkflow(wf *wfv1.Workflow) (*record.Run, error) {
	rec := &record.Run{ID: wf.Name, Pipeline: wf.Labels[wire.LabelPipeline], Status: record.StatusRunning, On: On, Namespace: wf.Namespace, Params: map[string]string{}}
	for _, p := range wf.Spec.Arguments.Parameters {
		if p.Value != nil {
			rec.Params[p.Name] = p.Value.String()
		}
	}
	tasks, err := argo.StepTasks(wf)
	if err != nil {
		return nil, err
	}
	stepOf, depends := map[string]string{}, map[string]string{}
	for _, st := range tasks {
		stepOf[st.Task] = st.Step
	}
	for _, t := range wf.Spec.Templates {
		if t.Name == argo.EntryTemplate && t.DAG != nil {
			for _, task := range t.DAG.Tasks {
				depends[task.Name] = task.Depends
			}
		}
	}
	for _, st := range tasks {
		var deps []string
		for _, d := range taskDeps(depends[st.Task]) {
			if s, ok := stepOf[d]; ok {
				d = s
			}
			deps = append(deps, d)
		}
		rec.Steps = append(rec.Steps, record.StepRecord{Name: st.Step, Status: record.StatusPending, DependsOn: deps, Outputs: []record.OutputRecord{}})
	}
	return rec, nil
}

// taskDeps returns the tasks a compiled task's depends expression names
// ("a.Succeeded && b.Succeeded", see pipeline/argo).
func taskDeps(depends string) []string {
	var out []string
	for _, d := range strings.Split(depends, "&&") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, strings.TrimSuffix(d, ".Succeeded"))
		}
	}
	return out
}

// Record brings rec up to date with wf and sets the outputs of each
// succeeded step from its outputs record in the store (every output with
// its declared type; see recordstore.ReadStepOutputs), and marks it cached
// when that record says the outputs were reused from an earlier run. A
// succeeded step without one keeps its outputs and says so in its message.
func Record(ctx context.Context, store artifacts.Store, rec *record.Run, wf *wfv1.Workflow) error {
	updateRecord(rec, wf)
	loops := map[string]bool{}
	for _, s := range rec.Steps {
		if step, _, ok := pipeline.SplitIteration(s.Name); ok {
			loops[step] = true
		}
	}
	for i := range rec.Steps {
		s := &rec.Steps[i]
		if err := gangAttempts(ctx, store, rec.ID, s, loops[s.Name]); err != nil {
			return err
		}
		// A loop step's outputs are its iterations'.
		if s.Status != record.StatusSucceeded || loops[s.Name] {
			continue
		}
		outs, err := recordstore.ReadStepOutputs(ctx, store, rec.ID, s.Name)
		if errors.Is(err, artifacts.ErrNotFound) {
			s.Message = err.Error()
			continue
		}
		if err != nil {
			return err
		}
		if outs.Skipped != "" {
			// The iteration's condition was false: its pod ran no program.
			s.Status, s.Message, s.Attempts, s.ExitCode = record.StatusSkipped, outs.Skipped, 0, nil
			continue
		}
		s.Outputs = outs.Outputs
		if outs.CachedFrom != "" {
			// The step's pod found its outputs in the cache and ran no
			// program: no attempt, as in a local run.
			s.Cached, s.CachedFrom, s.Attempts = true, outs.CachedFrom, 0
			s.Message = "outputs reused from run " + outs.CachedFrom
		}
	}
	countIterations(rec)
	return nil
}

// gangAttempts sets the gang attempts and the metrics series of a step
// that ran from its gang record, which a distributed step's launcher
// writes (none for the others).
func gangAttempts(ctx context.Context, store artifacts.Store, run string, s *record.StepRecord, loop bool) error {
	switch {
	case loop, s.Cached, s.Status == record.StatusPending, s.Status == record.StatusSkipped:
		return nil
	}
	g, err := recordstore.ReadGang(ctx, store, run, s.Name)
	if err != nil {
		return err
	}
	s.Progress = g.Progress
	if len(g.GangAttempts) > 0 {
		s.GangAttempts = g.GangAttempts
		// Every gang attempt started the program, as a local run counts
		// them: those that did not succeed, and the one that did.
		n := len(g.GangAttempts)
		if s.Status == record.StatusSucceeded {
			n++
		}
		s.Attempts = max(s.Attempts, n)
	}
	return nil
}

// countIterations sets the message of each loop step of rec: how its
// iterations ended.
func countIterations(rec *record.Run) {
	counts, n := map[string]map[string]int{}, map[string]int{}
	for _, s := range rec.Steps {
		if step, _, ok := pipeline.SplitIteration(s.Name); ok {
			if counts[step] == nil {
				counts[step] = map[string]int{}
			}
			counts[step][s.Status]++
			n[step]++
		}
	}
	for i := range rec.Steps {
		if c := counts[rec.Steps[i].Name]; c != nil {
			rec.Steps[i].Message = iterationsMessage(n[rec.Steps[i].Name], c)
		}
	}
}

// iterationsMessage is a loop step's message: its n iterations, counted
// by status.
func iterationsMessage(n int, counts map[string]int) string {
	return fmt.Sprintf("%d iterations: %s", n, record.CountStatuses(counts))
}

// Refresh updates a Running cluster run's record from its workflow, in the
// namespace the record names, and writes the record back once the workflow
// ended. When the cluster cannot tell (no kubeconfig, unreachable, no such
// workflow) it returns rec unchanged and why.
func Refresh(ctx context.Context, connect Connect, store artifacts.Store, rec *record.Run) (*record.Run, error) {
	if rec.On != On || rec.Status != record.StatusRunning {
		return rec, nil
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	_, _, wf, err := findWorkflow(ctx, connect, rec)
	if err != nil {
		return rec, err
	}
	next := *rec
	next.Steps = append([]record.StepRecord(nil), rec.Steps...)
	if err := Record(ctx, store, &next, wf); err != nil {
		return rec, err
	}
	if next.Status != record.StatusRunning {
		if err := recordstore.WriteRun(ctx, store, &next); err != nil {
			return &next, err
		}
	}
	return &next, nil
}

// refreshTimeout bounds how long Refresh waits for the cluster.
const refreshTimeout = 5 * time.Second

// findWorkflow returns the clients, the namespace and the workflow of
// cluster run rec: in the namespace its record names, else the kubeconfig's.
func findWorkflow(ctx context.Context, connect Connect, rec *record.Run) (*Clients, string, *wfv1.Workflow, error) {
	kc, err := connect()
	if err != nil {
		return nil, "", nil, err
	}
	ns := cmp.Or(rec.Namespace, kc.Namespace)
	wf, err := kc.Workflows.ArgoprojV1alpha1().Workflows(ns).Get(ctx, rec.ID, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil, fmt.Errorf("workflow %s not found in namespace %s", rec.ID, ns)
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("workflow %s in namespace %s: %w", rec.ID, ns, err)
	}
	return kc, ns, wf, nil
}
