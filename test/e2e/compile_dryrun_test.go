package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var workflowsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}

// TestCompiledWorkflowsPassTheAPIServer compiles the example and every
// pipeline of pipeline/argo/testdata with `pipectl compile` and creates each
// Workflow with a server-side dry run, so the real API server checks it
// against Argo's full Workflow CRD schema (installed by the test bed from the
// pinned argo module). A broken workflow must be refused, which shows that
// the schema is in force.
func TestCompiledWorkflowsPassTheAPIServer(t *testing.T) {
	c, ns, ctx := setup(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "pipectl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pipectl")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build pipectl: %v\n%s", err, out)
	}
	files, err := filepath.Glob(filepath.Join(repo, "pipeline/argo/testdata/*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("testdata pipelines: %v %v", files, err)
	}
	files = append(files, filepath.Join(repo, "examples/attrition/pipeline.yaml"))
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	wfs := dyn.Resource(workflowsGVR).Namespace(ns)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	compiled := 0
	for _, f := range files {
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, []string{"compile", f, "--artifacts", "s3://runs/pipelines", "--s3-secret", "pipectl-s3",
			"--s3-endpoint", "http://" + c.MinIOEndpoint, "--image", "pipectl:e2e", "-n", ns,
			"--no-ship-code", "--image-tags"}...) // the schema is checked; no pod runs, and the testdata's images are in no registry
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			// Some testdata files are components, not pipelines.
			if strings.Contains(errOut.String(), "expected kind Pipeline") {
				continue
			}
			t.Fatalf("pipectl compile %s: %v\n%s", f, err, errOut.String())
		}
		var obj map[string]any
		if err := yaml.Unmarshal(out.Bytes(), &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wf := &unstructured.Unstructured{Object: obj}
		created, err := wfs.Create(ctx, wf, dryRun)
		if err != nil {
			t.Errorf("%s: the API server refused the compiled workflow: %v", filepath.Base(f), err)
			continue
		}
		if !strings.HasPrefix(created.GetName(), wf.GetGenerateName()) || created.GetName() == wf.GetGenerateName() {
			t.Errorf("%s: dry-run name %q from generateName %q", filepath.Base(f), created.GetName(), wf.GetGenerateName())
		}
		compiled++

		// The same workflow with a field of the wrong type is refused.
		broken := wf.DeepCopy()
		if err := unstructured.SetNestedField(broken.Object, "not-a-list", "spec", "templates"); err != nil {
			t.Fatal(err)
		}
		if _, err := wfs.Create(ctx, broken, dryRun); err == nil || !strings.Contains(err.Error(), "spec.templates") {
			t.Errorf("%s: a workflow with spec.templates a string was not refused by the schema: %v", filepath.Base(f), err)
		}
	}
	if compiled < 4 {
		t.Errorf("only %d workflows compiled and checked", compiled)
	}
	// Nothing was stored.
	list, err := wfs.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("dry runs stored workflows: %v %v", list, err)
	}
	_ = os.Remove(bin)
}
