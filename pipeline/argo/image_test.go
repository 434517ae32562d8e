package argo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// TestStepImage: a step's image: replaces its component's, also when the
// component leaves it empty (as KFP catalogue components do for their users
// to fill in); with neither, compile says where to set one.
func TestStepImage(t *testing.T) {
	const pipe = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: img}
steps:
  - name: a
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: "%s", command: [echo, hi]}
%s`
	for _, tc := range []struct {
		name, component, step, want, wantErr string
	}{
		{"component's", "base:1", "", "base:1", ""},
		{"step's replaces it", "base:1", "    image: mine:2\n", "mine:2", ""},
		{"component leaves it empty", "", "    image: mine:2\n", "mine:2", ""},
		{"neither", "", "", "", "component c has no image: set image: in its spec, or in the step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pipeline.yaml")
			if err := os.WriteFile(file, []byte(strings.Replace(strings.Replace(pipe, "%s", tc.component, 1), "%s", tc.step, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := pipeline.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			wf, err := Compile(p, testOptions())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Compile: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lint(t, wf)
			var images []string
			for _, tmpl := range wf.Spec.Templates {
				if tmpl.Container != nil {
					images = append(images, tmpl.Container.Image)
				}
			}
			if len(images) != 1 || images[0] != tc.want {
				t.Errorf("step containers' images %v, want [%s]", images, tc.want)
			}
		})
	}
}
