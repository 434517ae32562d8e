package argo

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestCompileKFPv2: KFP v2 pipeline files compile to Workflows Argo's own
// validator accepts, with a task per step (nested sub-DAG tasks as
// WRAPPER-TASK, loops, the exit task as the exit handler) and the KFP
// placeholders as pipectl's in the step specs.
func TestCompileKFPv2(t *testing.T) {
	for file, want := range map[string]struct {
		tasks, exit []string
	}{
		"../testdata/kfpv2/wiring.yaml":              {tasks: []string{"for-loop-1", "produce", "wrapped-consume"}},
		"../testdata/kfpv2/executor.yaml":            {tasks: []string{"lines", "show", "stats"}},
		"../testdata/kfpv2/exit.yaml":                {tasks: []string{"exit-handler-1-work"}, exit: []string{"report"}},
		"../testdata/kfpv2/loops.yaml":               {tasks: []string{"make-list", "for-loop-1-show", "for-loop-1-mark", "gather", "for-loop-2-for-loop-3-pair", "for-loop-2-note", "done"}},
		"../testdata/kfpv2/collected_artifacts.yaml": {tasks: []string{"for-loop-1", "join"}},
		"../testdata/kfpv2/oneof.yaml":               {tasks: []string{"condition-branches-1-condition-2-make", "condition-branches-1-condition-3-make-2", "use"}},
		"../testdata/kfpv2/ignore_upstream.yaml":     {tasks: []string{"fail-op", "print-op"}},
	} {
		t.Run(file, func(t *testing.T) {
			wf, b := compileFile(t, file, testOptions())
			lint(t, wf)
			steps := map[string][]string{}
			for _, tmpl := range wf.Spec.Templates {
				if tmpl.DAG == nil {
					continue
				}
				for _, task := range tmpl.DAG.Tasks {
					steps[tmpl.Name] = append(steps[tmpl.Name], task.Name)
				}
			}
			var all []string
			for _, tasks := range steps {
				all = append(all, tasks...)
			}
			for _, s := range append(slices.Clone(want.tasks), want.exit...) {
				if !slices.Contains(all, s) {
					t.Errorf("no task %s (tasks by template: %v)", s, steps)
				}
			}
			if (len(want.exit) > 0) != (wf.Spec.OnExit != "") {
				t.Errorf("onExit %q, want exit steps %v", wf.Spec.OnExit, want.exit)
			}
			if strings.Contains(string(b), "{{$") {
				t.Errorf("a KFP placeholder reached the Workflow:\n%s", b)
			}
		})
	}
}

// TestCompileKFPv2Conditions: the when of a task inside nested dsl.If
// sub-DAGs is the outer and inner comparisons joined with &&, an ordered
// comparison of ints compares their int(); evaluated as the Argo
// controller does, each gives what the local run gives
// (TestRunKFPv2Conditions). A task output inside a constant's text is an
// upstream value of its own.
func TestCompileKFPv2Conditions(t *testing.T) {
	wf, _ := compileFile(t, "../testdata/kfpv2/conditions.yaml", testOptions())
	lint(t, wf)
	when := map[string]string{}
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		when[task.Name] = task.When
		if task.Name != "condition-1-condition-2-big" {
			continue
		}
		// The int inside the f-string constant travels as an upstream
		// value of its own, and the pod puts it into the text.
		var w *plan.Wiring
		args := map[string]string{}
		for _, prm := range task.Arguments.Parameters {
			args[prm.Name] = prm.Value.String()
			if prm.Name == StepInput {
				var err error
				if w, err = plan.DecodeWiring(prm.Value.String()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got, want := args[UpstreamInputPrefix+"msg--1"], "{{tasks.condition-1-num.outputs.parameters.Output}}"; got != want {
			t.Errorf("big's argument %s = %q, want %q (arguments: %v)", UpstreamInputPrefix+"msg--1", got, want, args)
		}
		if task.Depends != "condition-1-num.Succeeded" {
			t.Errorf("big depends on %q, want condition-1-num.Succeeded", task.Depends)
		}
		if w == nil {
			t.Fatal("big has no step spec")
		}
		if got, err := w.Params["msg"].Eval(plan.Values{Upstream: map[string]string{"msg--1": "7"}}); err != nil || got != "big: 7!" {
			t.Errorf("big's msg = %q, %v; want %q", got, err, "big: 7!")
		}
	}
	for _, tc := range []struct {
		flip, num string
		want      map[string]string
	}{
		{"heads", "7", map[string]string{"condition-1-num": "true", "condition-1-condition-2-big": "true", "condition-1-condition-3-small": "false", "condition-4-tails": "false"}},
		{"heads", "5", map[string]string{"condition-1-condition-2-big": "false", "condition-1-condition-3-small": "true"}},
		{"heads", "-0012", map[string]string{"condition-1-condition-2-big": "false", "condition-1-condition-3-small": "true"}},
		{"heads", wire.EncodeValue("10"), map[string]string{"condition-1-condition-2-big": "true", "condition-1-condition-3-small": "false"}},
		{"tails", "7", map[string]string{"condition-1-num": "false", "condition-1-condition-2-big": "false", "condition-4-tails": "true"}},
		{"edge", "7", map[string]string{"condition-1-num": "false", "condition-4-tails": "false"}},
	} {
		scope := map[string]any{"workflow.parameters.flip": tc.flip, "tasks.condition-1-num.outputs.parameters.Output": tc.num}
		for task, want := range tc.want {
			if _, ok := when[task]; !ok {
				t.Fatalf("no task %s (tasks: %v)", task, when)
			}
			if got := evalWhen(t, when[task], scope); got != want {
				t.Errorf("flip %s, num %s: %s when gave %q, want %q (%s)", tc.flip, tc.num, task, got, want, when[task])
			}
		}
	}
}

// TestCompileKFPv2OneOf: a task given a dsl.OneOf output waits for each
// branch to succeed or be skipped (Skipped: its when; Omitted: its own
// upstream skipped), and for one of them to succeed; its step spec names
// the candidates, whose outputs the pod reads from the store.
func TestCompileKFPv2OneOf(t *testing.T) {
	wf, _ := compileFile(t, "../testdata/kfpv2/oneof.yaml", testOptions())
	lint(t, wf)
	const a, b = "condition-branches-1-condition-2-make", "condition-branches-1-condition-3-make-2"
	want := "(" + a + ".Succeeded || " + a + ".Skipped || " + a + ".Omitted) && (" + b + ".Succeeded || " + b + ".Skipped || " + b + ".Omitted) && (" + a + ".Succeeded || " + b + ".Succeeded)"
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.DAG == nil {
			continue
		}
		for _, task := range tmpl.DAG.Tasks {
			if task.Name != "use" {
				continue
			}
			if task.Depends != want {
				t.Errorf("use depends\n  %s\nwant\n  %s", task.Depends, want)
			}
			for _, prm := range task.Arguments.Parameters {
				if strings.HasPrefix(prm.Name, UpstreamInputPrefix) {
					t.Errorf("use gets %s from Argo: a oneOf value comes from the store", prm.Name)
				}
				if prm.Name != StepInput {
					continue
				}
				w, err := plan.DecodeWiring(prm.Value.String())
				if err != nil {
					t.Fatal(err)
				}
				refs := []plan.OutputRef{{Step: "condition-branches-1.condition-2.make", Output: "out"}, {Step: "condition-branches-1.condition-3.make-2", Output: "out"}}
				if diff := cmp.Diff(refs, w.OneOf["text"]); diff != "" {
					t.Errorf("oneOf of text (-want +got):\n%s", diff)
				}
			}
			return
		}
	}
	t.Fatal("no task use")
}
