package argo

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// TestNestedCompiledSize: a pipeline used a second time adds only its
// tasks (at most 1 KB each), no template: the templates are shared.
func TestNestedCompiledSize(t *testing.T) {
	const path = "testdata/nested.yaml"
	twice, twiceBytes := compileFile(t, path, testOptions())
	lint(t, twice)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The same pipeline with the second use ("large") left out.
	text := string(src)
	start, end := strings.Index(text, "  - name: large\n"), strings.Index(text, "  - name: report\n")
	once := text[:start] + strings.ReplaceAll(text[end:], "{{steps.large.outputs.report}}", "{{steps.small.outputs.report}}")
	p, err := pipeline.Parse(path, []byte(once))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	onceBytes, err := Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	if len(twice.Spec.Templates) != len(wf.Spec.Templates) {
		t.Errorf("templates: %d with the pipeline used twice, %d used once; want the same", len(twice.Spec.Templates), len(wf.Spec.Templates))
	}
	added := len(twice.Spec.Templates[0].DAG.Tasks) - len(wf.Spec.Templates[0].DAG.Tasks)
	if added != 5 {
		t.Fatalf("the second use added %d tasks, want its 5 steps", added)
	}
	if grew := len(twiceBytes) - len(onceBytes); grew > added*1024 {
		t.Errorf("the second use added %d bytes for %d tasks, want at most 1 KB each", grew, added)
	}
	t.Logf("compiled: %d bytes used once, %d used twice (%d tasks added)", len(onceBytes), len(twiceBytes), added)
}

// TestKFPGraphCompiles: KFP v1 graph components compile to tasks of the one
// DAG that Argo's validation accepts, one per task of the graphs.
func TestKFPGraphCompiles(t *testing.T) {
	wf, _ := compileFile(t, "../testdata/kfpgraph/valid.yaml", testOptions())
	lint(t, wf)
	st, err := StepTasks(wf)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.StepTask{
		{Step: "twice.inner.add-again", Task: "twice-inner-add-again"}, {Step: "twice.inner.add-first", Task: "twice-inner-add-first"},
		{Step: "sum.add-again", Task: "sum-add-again"}, {Step: "sum.add-first", Task: "sum-add-first"},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("steps and tasks (-want +got):\n%s", diff)
	}
	if n := len(wf.Spec.Templates); n != 3 {
		t.Errorf("%d templates, want 3 (main and one per shape of the add component)", n)
	}
}
