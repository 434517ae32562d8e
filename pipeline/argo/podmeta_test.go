package argo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPodMetadata: a step's podMetadata is its template's metadata (its
// pod's labels and annotations, beside the workflow's pod labels); steps
// that differ only in it get templates of their own.
func TestPodMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	text := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: m}
steps:
  - name: labelled
    component: &c {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: img:1, command: [prog]}
    podMetadata: {labels: {team: ml}, annotations: {note: "it's $(x)"}}
  - name: plain
    component: *c
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	wf, _ := compileFile(t, path, testOptions())
	lint(t, wf)
	byTask := map[string]string{}
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		byTask[task.Name] = task.Template
	}
	if byTask["labelled"] == byTask["plain"] {
		t.Fatalf("labelled and plain share template %s", byTask["plain"])
	}
	got := wf.GetTemplateByName(byTask["labelled"]).Metadata
	if diff := cmp.Diff(map[string]string{"team": "ml"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "it's $(x)"}, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if m := wf.GetTemplateByName(byTask["plain"]).Metadata; len(m.Labels)+len(m.Annotations) > 0 {
		t.Errorf("plain's template metadata %+v, want none", m)
	}
}
