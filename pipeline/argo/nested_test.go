package argo

import (
	"os"
	"strings"
	"testing"

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
