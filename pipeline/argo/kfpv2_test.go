package argo

import (
	"slices"
	"strings"
	"testing"
)

// TestCompileKFPv2: KFP v2 pipeline files compile to Workflows Argo's own
// validator accepts, with a task per step (nested sub-DAG tasks as
// WRAPPER-TASK, loops, the exit task as the exit handler) and the KFP
// placeholders as pipectl's in the step specs.
func TestCompileKFPv2(t *testing.T) {
	for file, want := range map[string]struct {
		tasks, exit []string
	}{
		"../testdata/kfpv2/wiring.yaml":   {tasks: []string{"for-loop-1", "produce", "wrapped-consume"}},
		"../testdata/kfpv2/executor.yaml": {tasks: []string{"lines", "show", "stats"}},
		"../testdata/kfpv2/exit.yaml":     {tasks: []string{"exit-handler-1-work"}, exit: []string{"report"}},
		"../testdata/kfpv2/loops.yaml":    {tasks: []string{"make-list", "for-loop-1-show", "for-loop-1-mark", "gather", "for-loop-2-for-loop-3-pair", "for-loop-2-note", "done"}},
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
