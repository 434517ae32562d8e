package argo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// sizedPipeline is a pipeline whose step is given a constant of n bytes.
func sizedPipeline(t *testing.T, n int) *pipeline.Pipeline {
	src := fmt.Sprintf(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata:
  name: big
steps:
  - name: use
    component:
      metadata: {name: use}
      image: busybox:1.36
      inputs: [{name: blob, type: string}]
      command: [sh, -c, 'echo "${#0}"', "{{inputs.blob}}"]
    inputs: {blob: %q}
`, strings.Repeat("x", n))
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWorkflowSizeBound: a 2 MiB constant makes a Workflow the API server
// would refuse; compile refuses it first, naming the bound and where the
// biggest value is. One of 100 KiB compiles.
func TestWorkflowSizeBound(t *testing.T) {
	_, err := Compile(sizedPipeline(t, 2<<20), testOptions())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the %d a cluster takes", MaxWorkflowBytes)) ||
		!strings.Contains(err.Error(), "its biggest value is spec.templates[0].dag.tasks[0].arguments.parameters[0].value (") {
		t.Fatalf("Compile: %.600v", err)
	}
	t.Logf("%.400v", err)
	if _, err := Compile(sizedPipeline(t, 100<<10), testOptions()); err != nil {
		t.Errorf("a 100 KiB constant: %v", err)
	}
}
