package validate

import (
	"strings"
	"testing"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

const kubeflow = "../../../../../pipeline/trainer/testdata/kubeflow/"

// TestValidateTrainerFiles: a runtime file validates as runtimes, naming
// what a step naming it would be refused for; a TrainJob as its pipeline,
// with --runtimes; one naming a runtime nobody gives fails at its line.
func TestValidateTrainerFiles(t *testing.T) {
	ios, _, out, errOut := podutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, Runtimes: []string{kubeflow + "runtimes"}}
	err := validateRun(&Options{IO: ios, Factory: f, Files: []string{kubeflow + "runtimes/llama3_2_1B.yaml", kubeflow + "examples/01-multi-node.yaml"}})
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, errOut)
	}
	for _, want := range []string{"llama3_2_1B.yaml: valid ClusterTrainingRuntime torchtune-llama3.2-1b (framework torch)", "01-multi-node.yaml: valid pipeline multi-node-example (1 step)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut.String(), `Refused (a step naming torchtune-llama3.2-1b fails): `+kubeflow+`runtimes/llama3_2_1B.yaml:37:17: spec.template.spec.replicatedJobs[0]: pipectl runs only the trainer job (node)`) {
		t.Errorf("stderr:\n%s", errOut)
	}
	ios, _, _, errOut = podutil.Test()
	err = validateRun(&Options{IO: ios, Factory: &cmdutil.Factory{IOStreams: ios}, Files: []string{kubeflow + "examples/01-multi-node.yaml"}})
	want := kubeflow + `examples/01-multi-node.yaml:38:11: spec.runtimeRef.name: no ClusterTrainingRuntime named "torch-distributed": no runtimes are loaded`
	if err == nil || !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("without --runtimes: %v\n%s\nwant %s…", err, errOut, want)
	}
}
