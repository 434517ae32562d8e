package launch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

const frameworksExample = "../../../../../examples/frameworks/pipeline.yaml"

// dryRunEnv returns the rank container env of the JobSet `launch --dry-run
// -o json` prints for step: values, or "index" for the completion index.
func dryRunEnv(t *testing.T, file, step string) map[string]string {
	t.Helper()
	f, out, _ := testFactory(t)
	if err := runLaunch(t, f, nil, "--dry-run", "-f", file, "--step", step, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatalf("not a JobSet: %v\n%s", err, out.String())
	}
	if len(js.Spec.ReplicatedJobs) != 1 {
		t.Fatalf("%d replicated jobs, want 1", len(js.Spec.ReplicatedJobs))
	}
	env := map[string]string{}
	for _, e := range js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") {
			env[e.Name] = "index"
		}
	}
	return env
}

// TestDryRunFrameworks: every rank pod (one template for all) carries its
// framework's variables, Trainer v2's, rank-varying ones from the pod's
// completion index.
func TestDryRunFrameworks(t *testing.T) {
	pick := func(env map[string]string, names ...string) map[string]string {
		out := map[string]string{}
		for _, n := range names {
			if v, ok := env[n]; ok {
				out[n] = v
			}
		}
		return out
	}
	env := dryRunEnv(t, frameworksExample, "xgboost")
	master := env["MASTER_ADDR"]
	if !strings.HasSuffix(master, "-0-0."+strings.SplitN(master, ".", 2)[1]) {
		t.Errorf("MASTER_ADDR %q is not rank 0's pod DNS name", master)
	}
	want := map[string]string{"DMLC_TRACKER_URI": master, "DMLC_TRACKER_PORT": "29500", "DMLC_TASK_ID": "index", "DMLC_NUM_WORKER": "2", "RANK": "index", "PIPECTL_FRAMEWORK": "xgboost"}
	if diff := cmp.Diff(want, pick(env, "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER", "RANK", "PIPECTL_FRAMEWORK")); diff != "" {
		t.Errorf("xgboost rank pod env (-want +got):\n%s", diff)
	}

	env = dryRunEnv(t, frameworksExample, "jax")
	want = map[string]string{"JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "index", "JAX_COORDINATOR_ADDRESS": env["MASTER_ADDR"] + ":29500", "PIPECTL_FRAMEWORK": "jax"}
	if diff := cmp.Diff(want, pick(env, "JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS", "DMLC_TASK_ID", "PIPECTL_FRAMEWORK")); diff != "" {
		t.Errorf("jax rank pod env (-want +got):\n%s", diff)
	}

	env = dryRunEnv(t, example, "train")
	if _, ok := env["PIPECTL_FRAMEWORK"]; ok || env["RANK"] != "index" {
		t.Errorf("a torch step's pod env %v: want no PIPECTL_FRAMEWORK, RANK from the index", env)
	}
}

// TestDryRunMPIRefused: mpi does not run on Kubernetes yet; launch says so.
func TestDryRunMPIRefused(t *testing.T) {
	f, _, _ := testFactory(t)
	err := runLaunch(t, f, nil, "--dry-run", "-f", frameworksExample, "--step", "mpi", "-o", "json")
	if err == nil || !strings.Contains(err.Error(), "framework mpi runs on this machine only") {
		t.Errorf("launch --dry-run of an mpi step: %v", err)
	}
}
