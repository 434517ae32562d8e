package launch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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
	doc := []byte(out.String())
	// With a Secret (mpi) or a PodGroup, a List whose first item is the JobSet.
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(doc, &list); err == nil && len(list.Items) > 0 {
		doc = list.Items[0]
	}
	var js jobsetv1alpha2.JobSet
	if err := json.Unmarshal(doc, &js); err != nil {
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

// TestDryRunMPI: an mpi step's JobSet is one Indexed Job of the nodes
// (node 0 also the launcher), which succeeds when node 0 does (the Job's
// successPolicy); every node pod mounts the step's Secret, whose hostfile
// lists every node pod's DNS name with procsPerNode slots, and gets
// Trainer's OMPI_MCA_* variables with pipectl's rsh agent. The dry run
// shows no key: the launcher makes the pair when it creates the Secret.
func TestDryRunMPI(t *testing.T) {
	f, out, _ := testFactory(t)
	if err := runLaunch(t, f, nil, "--dry-run", "-f", frameworksExample, "--step", "mpi", "-o", "json", "-n", "ml", "--run", "r1"); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string
		Items []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out.String()), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("want a List of the JobSet and the Secret (%v):\n%s", err, out.String())
	}
	var js jobsetv1alpha2.JobSet
	var sec corev1.Secret
	if err := json.Unmarshal(list.Items[0], &js); err != nil || js.Kind != "JobSet" {
		t.Fatalf("item 0 is no JobSet (%v): %s", err, list.Items[0])
	}
	if err := json.Unmarshal(list.Items[1], &sec); err != nil || sec.Kind != "Secret" {
		t.Fatalf("item 1 is no Secret (%v): %s", err, list.Items[1])
	}
	name := js.Name
	if sec.Name != name+"-mpi" || sec.Namespace != "ml" {
		t.Errorf("Secret %s/%s: want ml/%s-mpi", sec.Namespace, sec.Name, name)
	}
	hostfile := fmt.Sprintf("%[1]s-rank-0-0.%[1]s slots=2\n%[1]s-rank-0-1.%[1]s slots=2\n", name)
	if diff := cmp.Diff(map[string][]byte{"hostfile": []byte(hostfile)}, sec.Data); diff != "" {
		t.Errorf("Secret data, no key (-want +got):\n%s", diff)
	}
	if len(js.Spec.ReplicatedJobs) != 1 {
		t.Fatalf("%d replicated jobs, want 1", len(js.Spec.ReplicatedJobs))
	}
	job := js.Spec.ReplicatedJobs[0].Template.Spec
	if *job.Parallelism != 2 || job.SuccessPolicy == nil || len(job.SuccessPolicy.Rules) != 1 || *job.SuccessPolicy.Rules[0].SucceededIndexes != "0" {
		t.Errorf("rank Job: parallelism %d, successPolicy %+v: want 2 node pods, success when index 0 succeeds", *job.Parallelism, job.SuccessPolicy)
	}
	pod := job.Template.Spec
	var vol *corev1.SecretVolumeSource
	for _, v := range pod.Volumes {
		if v.Name == "pipectl-mpi" {
			vol = v.Secret
		}
	}
	if vol == nil || vol.SecretName != sec.Name {
		t.Errorf("volumes %+v: want the Secret %s", pod.Volumes, sec.Name)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || m.Name == "pipectl-mpi" && m.MountPath == "/etc/pipectl-mpi" && m.ReadOnly
	}
	if !mounted {
		t.Errorf("mounts %+v: want the Secret read-only at /etc/pipectl-mpi", pod.Containers[0].VolumeMounts)
	}
	env := dryRunEnv(t, frameworksExample, "mpi")
	want := map[string]string{
		"OMPI_MCA_orte_default_hostfile": "/etc/pipectl-mpi/hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
		"OMPI_MCA_orte_set_default_slots": "2", "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
		"OMPI_MCA_plm_rsh_agent": "/pipectl/pipectl mpi-rsh", "PIPECTL_MPI_AGENT_PORT": "2222",
		"PIPECTL_FRAMEWORK": "mpi", "NODE_RANK": "index", "NNODES": "2", "LOCAL_WORLD_SIZE": "2",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = env[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mpi node pod env (-want +got):\n%s", diff)
	}
	if _, ok := env["RANK"]; ok {
		t.Errorf("an mpi node pod has RANK=%q: mpirun gives each process its rank", env["RANK"])
	}
}
