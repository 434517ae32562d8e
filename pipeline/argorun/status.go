package argorun

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

// stepNodes returns the node of each of steps' DAG task in wf (absent
// before the task has one). A step's task is the one the workflow's step
// annotation names (argo.StepTasks), or, for a step it does not name, the
// task of the step's name.
func stepNodes(wf *wfv1.Workflow, steps []string) map[string]*wfv1.NodeStatus {
	task := map[string]string{}
	if tasks, err := argo.StepTasks(wf); err == nil {
		for _, st := range tasks {
			task[st.Step] = st.Task
		}
	}
	out := map[string]*wfv1.NodeStatus{}
	for _, s := range steps {
		t, ok := task[s]
		if !ok {
			t = s
		}
		if n := argo.TaskNode(wf, t); n != nil {
			out[s] = n
		}
	}
	return out
}

// stepStatus maps an Argo node phase to a step status.
func stepStatus(p wfv1.NodePhase) string {
	switch p {
	case wfv1.NodeRunning:
		return record.StatusRunning
	case wfv1.NodeSucceeded:
		return record.StatusSucceeded
	case wfv1.NodeFailed, wfv1.NodeError:
		return record.StatusFailed
	case wfv1.NodeSkipped, wfv1.NodeOmitted:
		return record.StatusSkipped
	default:
		return record.StatusPending
	}
}

// runStatus maps a workflow's phase to a run status: a failed workflow that
// was told to stop or terminate (spec.shutdown) is Cancelled.
func runStatus(wf *wfv1.Workflow) string {
	switch wf.Status.Phase {
	case wfv1.WorkflowSucceeded:
		return record.StatusSucceeded
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		if wf.Spec.Shutdown != "" {
			return record.StatusCancelled
		}
		return record.StatusFailed
	default:
		return record.StatusRunning
	}
}

// updateRecord brings a run record up to date with its workflow: the run's
// status, end and message, and each step's status, attempts, exit code,
// times and message. Outputs are not taken from the workflow: Record reads
// them, typed, from each step's outputs record. Pure.
func updateRecord(rec *record.Run, wf *wfv1.Workflow) {
	rec.On = On
	rec.Status = runStatus(wf)
	if !wf.Status.StartedAt.IsZero() {
		rec.Started = wf.Status.StartedAt.Time
	}
	if rec.Status != record.StatusRunning && !wf.Status.FinishedAt.IsZero() {
		t := wf.Status.FinishedAt.Time
		rec.Finished = &t
	}
	if wf.Status.Message != "" {
		rec.Message = wf.Status.Message
	}
	var names []string
	for _, s := range rec.Steps {
		if _, _, iter := pipeline.SplitIteration(s.Name); !iter {
			names = append(names, s.Name)
		}
	}
	nodes := stepNodes(wf, names)
	old := map[string]record.StepRecord{}
	for _, s := range rec.Steps {
		old[s.Name] = s
	}
	var steps []record.StepRecord
	for _, name := range names {
		s := old[name]
		n := nodes[name]
		if n == nil {
			if rec.Status != record.StatusRunning && s.Status == record.StatusPending {
				s.Status = record.StatusSkipped
			}
			steps = append(steps, s)
			continue
		}
		applyNode(&s, wf, n, rec.Status)
		steps = append(steps, s)
		if n.Type == wfv1.NodeTypeTaskGroup {
			steps = append(steps, iterations(wf, rec.Status, &steps[len(steps)-1], old)...)
		}
	}
	rec.Steps = steps
}

// iterations are the records of a loop step's iterations: one per item
// (or per iteration node while the items are not known), updated from
// its node; the loop step's message counts how they ended.
func iterations(wf *wfv1.Workflow, runStatus string, loop *record.StepRecord, old map[string]record.StepRecord) []record.StepRecord {
	task := taskOf(wf, loop.Name)
	nodes := argo.IterationNodes(wf, task)
	items, _ := argo.IterationItems(wf, task)
	n := len(items)
	for i := range nodes {
		n = max(n, i+1)
	}
	counts := map[string]int{}
	out := make([]record.StepRecord, 0, n)
	for i := range n {
		name := pipeline.IterationName(loop.Name, i)
		s, ok := old[name]
		if !ok {
			s = record.StepRecord{Name: name, Status: record.StatusPending, DependsOn: loop.DependsOn, Outputs: []record.OutputRecord{}}
		}
		if i < len(items) {
			s.Item = json.RawMessage(items[i])
		}
		if node := nodes[i]; node != nil {
			applyNode(&s, wf, node, runStatus)
		} else if runStatus != record.StatusRunning && s.Status == record.StatusPending {
			s.Status = record.StatusSkipped
		}
		counts[s.Status]++
		out = append(out, s)
	}
	if n > 0 {
		loop.Message = iterationsMessage(n, counts)
	}
	return out
}

// applyNode updates a step record from its node: status, message,
// attempts, times and exit code.
func applyNode(s *record.StepRecord, wf *wfv1.Workflow, n *wfv1.NodeStatus, runStatus string) {
	s.Status = stepStatus(n.Phase)
	if s.Status == record.StatusFailed && runStatus == record.StatusCancelled {
		s.Status = record.StatusCancelled
	}
	s.Message = n.Message
	pods := argo.PodNodes(wf, n)
	if len(pods) > 0 && n.Type != wfv1.NodeTypeTaskGroup {
		s.Attempts = len(pods)
	}
	if !n.StartedAt.IsZero() {
		t := n.StartedAt.Time
		s.Started = &t
	}
	if !n.FinishedAt.IsZero() {
		t := n.FinishedAt.Time
		s.Finished = &t
	}
	if n.Type == wfv1.NodeTypeTaskGroup {
		return
	}
	out := n.Outputs
	if len(pods) > 0 && pods[len(pods)-1].Outputs != nil {
		out = pods[len(pods)-1].Outputs
	}
	if out != nil && out.ExitCode != nil {
		if c, err := strconv.Atoi(*out.ExitCode); err == nil {
			s.ExitCode = &c
		}
	}
}

// loopView is how a loop step's iterations stand in wf, as the live output
// shows them: their names at once (STEP[0..n-1]), their statuses counted
// ("2 succeeded, 1 failed"), and the records of the failed ones. ok is
// false while no iteration is known.
func loopView(wf *wfv1.Workflow, step string) (name, counts string, failed []record.StepRecord, ok bool) {
	loop := record.StepRecord{Name: step}
	its := iterations(wf, record.StatusRunning, &loop, nil)
	if len(its) == 0 {
		return "", "", nil, false
	}
	n := map[string]int{}
	for _, it := range its {
		n[it.Status]++
		if it.Status == record.StatusFailed {
			failed = append(failed, it)
		}
	}
	return pipeline.IterationRange(step, len(its)), record.CountStatuses(n), failed, true
}

// taskOf is the DAG task of step in wf (argo.StepTasks), or the step's name.
func taskOf(wf *wfv1.Workflow, step string) string {
	if tasks, err := argo.StepTasks(wf); err == nil {
		for _, st := range tasks {
			if st.Step == step {
				return st.Task
			}
		}
	}
	return step
}

// stepPod is a Pod node of a step and the name its log goes under.
type stepPod struct {
	wfv1.NodeStatus
	step string
}

// stepPods returns the Pod nodes of a step's node n, oldest attempt first:
// the step's own, or for a loop step each iteration's, named STEP[i], in
// the order of the iterations.
func stepPods(wf *wfv1.Workflow, step string, n *wfv1.NodeStatus) []stepPod {
	var out []stepPod
	if n == nil || n.Type != wfv1.NodeTypeTaskGroup {
		for _, p := range argo.PodNodes(wf, n) {
			out = append(out, stepPod{p, step})
		}
		return out
	}
	its := argo.IterationNodes(wf, taskOf(wf, step))
	for _, i := range slices.Sorted(maps.Keys(its)) {
		for _, p := range argo.PodNodes(wf, its[i]) {
			out = append(out, stepPod{p, pipeline.IterationName(step, i)})
		}
	}
	return out
}
