package argorun

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

func statusNode(id, task string, typ wfv1.NodeType, phase wfv1.NodePhase, start int, exit string) wfv1.NodeStatus {
	n := wfv1.NodeStatus{ID: id, DisplayName: task, Type: typ, BoundaryID: "wf-1", Phase: phase,
		StartedAt: metav1.NewTime(time.Unix(int64(start), 0))}
	if exit != "" {
		n.Outputs = &wfv1.Outputs{ExitCode: &exit}
		n.FinishedAt = metav1.NewTime(time.Unix(int64(start+1), 0))
	}
	return n
}

func pendingRecord(steps ...string) *record.Run {
	rec := &record.Run{ID: "wf-1", Status: record.StatusRunning}
	for _, s := range steps {
		rec.Steps = append(rec.Steps, record.StepRecord{Name: s, Status: record.StatusPending, Outputs: []record.OutputRecord{}})
	}
	return rec
}

func TestUpdateRecord(t *testing.T) {
	at := func(s int) *time.Time { v := time.Unix(int64(s), 0); return &v }
	code := func(c int) *int { return &c }
	pod := statusNode("p1", "make", wfv1.NodeTypePod, wfv1.NodeSucceeded, 10, "0")
	pod.Outputs.Parameters = []wfv1.Parameter{{Name: "n", Value: wfv1.AnyStringPtr(wire.EncodeValue("{{x}}"))}}
	retry := statusNode("r1", "step-1st", wfv1.NodeTypeRetry, wfv1.NodeFailed, 20, "")
	retry.Message = "No more retries left"
	retry.Children = []string{"a1", "a2"}
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "wf-1", Annotations: map[string]string{
			wire.AnnotationSteps: `[{"step":"make","task":"make"},{"step":"1st","task":"step-1st"},{"step":"never","task":"never"}]`}},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed, StartedAt: metav1.NewTime(time.Unix(5, 0)), FinishedAt: metav1.NewTime(time.Unix(40, 0)),
			Message: "child failed",
			Nodes: wfv1.Nodes{
				"wf-1": {ID: "wf-1", DisplayName: "wf-1", Type: wfv1.NodeTypeDAG, Phase: wfv1.NodeFailed},
				"p1":   pod,
				"r1":   retry,
				"a1":   statusNode("a1", "step-1st(0)", wfv1.NodeTypePod, wfv1.NodeFailed, 20, "2"),
				"a2":   statusNode("a2", "step-1st(1)", wfv1.NodeTypePod, wfv1.NodeFailed, 25, "3"),
				// Skipped by its when; a task after it ran (its oneOf
				// candidate): the child is that task's pod, not its own.
				"s1": {ID: "s1", DisplayName: "never", Type: wfv1.NodeTypeSkipped, BoundaryID: "wf-1", Phase: wfv1.NodeSkipped, Children: []string{"p1"}},
			}},
	}
	rec := pendingRecord("make", "1st", "never")
	updateRecord(rec, wf)
	want := &record.Run{ID: "wf-1", Status: record.StatusFailed, On: "argo", Started: time.Unix(5, 0), Finished: at(40), Message: "child failed",
		Steps: []record.StepRecord{
			{Name: "make", Status: record.StatusSucceeded, ExitCode: code(0), Attempts: 1, Started: at(10), Finished: at(11),
				Outputs: []record.OutputRecord{}},
			{Name: "1st", Status: record.StatusFailed, ExitCode: code(3), Attempts: 2, Started: at(20), Message: "No more retries left",
				Outputs: []record.OutputRecord{}},
			{Name: "never", Status: record.StatusSkipped, Outputs: []record.OutputRecord{}},
		}}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("updateRecord (-want +got):\n%s", diff)
	}

	wf.Spec.Shutdown = wfv1.ShutdownStrategyStop
	if got := runStatus(wf); got != record.StatusCancelled {
		t.Errorf("runStatus of a stopped workflow = %s, want Cancelled", got)
	}
}

// Steps 1a and step-1a: the compiler names 1a's task step-1a-2 (step-1a is
// taken); each step's record shows its own task's status, from the mapping
// the compiled workflow carries.
func TestUpdateRecordCollidingTaskNames(t *testing.T) {
	p, err := pipeline.Parse("pipeline.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: clash}
steps:
  - name: 1a
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: noop}
      image: busybox
      command: ["true"]
  - name: step-1a
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: noop}
      image: busybox
      command: ["true"]
`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := argo.Compile(p, argo.Options{Image: "pipectl:test", Artifacts: "s3://b/runs"})
	if err != nil {
		t.Fatal(err)
	}
	wf.Name = "wf-1"
	tasks, err := argo.StepTasks(wf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]wire.StepTask{{Step: "1a", Task: "step-1a-2"}, {Step: "step-1a", Task: "step-1a"}}, tasks); diff != "" {
		t.Fatalf("StepTasks (-want +got):\n%s", diff)
	}
	wf.Status = wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed, Nodes: wfv1.Nodes{
		"n1": statusNode("n1", "step-1a-2", wfv1.NodeTypePod, wfv1.NodeFailed, 10, "7"),
		"n2": statusNode("n2", "step-1a", wfv1.NodeTypePod, wfv1.NodeSucceeded, 10, "0"),
	}}
	rec := pendingRecord("1a", "step-1a")
	updateRecord(rec, wf)
	got := map[string]string{}
	for _, s := range rec.Steps {
		got[s.Name] = s.Status
	}
	if diff := cmp.Diff(map[string]string{"1a": record.StatusFailed, "step-1a": record.StatusSucceeded}, got); diff != "" {
		t.Errorf("step statuses (-want +got):\n%s", diff)
	}
	attached, err := RecordFromWorkflow(wf)
	if err != nil || len(attached.Steps) != 2 || attached.Steps[0].Name != "1a" || attached.Steps[1].Name != "step-1a" {
		t.Errorf("RecordFromWorkflow = %+v, %v; want steps 1a, step-1a", attached, err)
	}
}

// A loop step's TaskGroup node and its iteration nodes "TASK(i:i)" become
// the records STEP and STEP[i] with their items; a finally step's node is
// in the onExit DAG.
func TestUpdateRecordLoopAndFinally(t *testing.T) {
	p, err := pipeline.Parse("pipeline.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: loops}
params:
  grid: {type: json, default: [{lr: 0.10}, {lr: 1e-3}, {lr: 2}]}
steps:
  - name: gen
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: gen}
      outputs: [{name: lrs, type: json}]
      image: busybox
      command: [gen, "{{outputs.lrs.path}}"]
  - name: train
    loop: {items: "{{params.grid}}"}
    inputs: {lr: "{{item.lr}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      inputs: [{name: lr, type: string}]
      image: busybox
      command: [train, "{{inputs.lr}}"]
  - name: again
    loop: {items: "{{steps.gen.outputs.lrs}}", parallelism: 1}
    inputs: {lr: "{{item}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      inputs: [{name: lr, type: string}]
      image: busybox
      command: [train, "{{inputs.lr}}"]
finally:
  - name: notify
    inputs: {lr: "{{run.status}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      inputs: [{name: lr, type: string}]
      image: busybox
      command: [train, "{{inputs.lr}}"]
`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := argo.Compile(p, argo.Options{Image: "pipectl:test", Artifacts: "s3://b/runs"})
	if err != nil {
		t.Fatal(err)
	}
	wf.Name = "wf-1"
	gen := statusNode("g", "gen", wfv1.NodeTypePod, wfv1.NodeSucceeded, 1, "0")
	gen.Outputs.Parameters = []wfv1.Parameter{{Name: "lrs", Value: wfv1.AnyStringPtr(`["x", 7]`)}}
	exit := wfv1.NodeStatus{ID: "e", Name: "wf-1.onExit", DisplayName: "wf-1.onExit", Type: wfv1.NodeTypeDAG, Phase: wfv1.NodeSucceeded}
	notify := statusNode("n", "notify", wfv1.NodeTypePod, wfv1.NodeSucceeded, 30, "0")
	notify.BoundaryID = "e"
	// again is a bounded loop: its task runs a DAG template holding the loop.
	loop := statusNode("aw", "again", wfv1.NodeTypeDAG, wfv1.NodeRunning, 12, "")
	loop.TemplateName = "again-loop"
	inLoop := func(n wfv1.NodeStatus) wfv1.NodeStatus { n.BoundaryID = "aw"; return n }
	wf.Status = wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed, Nodes: wfv1.Nodes{
		"g":  gen,
		"tg": statusNode("tg", "train", wfv1.NodeTypeTaskGroup, wfv1.NodeFailed, 10, ""),
		"t0": statusNode("t0", "train(0:0)", wfv1.NodeTypePod, wfv1.NodeSucceeded, 10, "0"),
		"t1": statusNode("t1", "train(1:1)", wfv1.NodeTypePod, wfv1.NodeFailed, 10, "3"),
		"aw": loop,
		"ag": inLoop(statusNode("ag", "again", wfv1.NodeTypeTaskGroup, wfv1.NodeRunning, 12, "")),
		"a1": inLoop(statusNode("a1", "again(1:1)", wfv1.NodeTypePod, wfv1.NodeRunning, 12, "")),
		"e":  exit,
		"n":  notify,
	}}
	rec := pendingRecord("gen", "train", "again", "notify")
	updateRecord(rec, wf)
	type row struct{ Name, Status, Item, Message string }
	var got []row
	for _, s := range rec.Steps {
		got = append(got, row{s.Name, s.Status, string(s.Item), s.Message})
	}
	want := []row{
		{"gen", "Succeeded", "", ""},
		{"train", "Failed", "", "3 iterations: 1 succeeded, 1 failed, 1 skipped"},
		{"train[0]", "Succeeded", `{"lr":0.10}`, ""},
		{"train[1]", "Failed", `{"lr":1e-3}`, ""},
		{"train[2]", "Skipped", `{"lr":2}`, ""},
		{"again", "Running", "", "2 iterations: 1 skipped, 1 running"},
		{"again[0]", "Skipped", `"x"`, ""}, // the workflow ended
		{"again[1]", "Running", `7`, ""},
		{"notify", "Succeeded", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
