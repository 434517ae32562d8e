package argo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestCompileRefusesCredentials: an endpoint or a root with credentials in
// it is refused (they would be written into the workflow), and the error
// does not repeat the secret.
func TestCompileRefusesCredentials(t *testing.T) {
	p, err := pipeline.Load("testdata/fanout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*Options)
		want string
	}{
		"endpoint":          {func(o *Options) { o.S3Endpoint = "http://KEY:TOPSECRET@minio:9000" }, `--s3-endpoint: S3 endpoint "http://REDACTED@minio:9000" holds credentials`},
		"endpoint no host":  {func(o *Options) { o.S3Endpoint = "KEY:TOPSECRET@minio:9000" }, `"REDACTED@minio:9000" holds credentials`},
		"endpoint unparsed": {func(o *Options) { o.S3Endpoint = "http://KEY:TOP SECRET@mi nio" }, `"http://REDACTED@mi nio"`},
		"endpoint with $":   {func(o *Options) { o.S3Endpoint = "http://KEY:TOPSECRET$@minio" }, `"http://REDACTED@minio": must not contain {{ or $`},
		"root":              {func(o *Options) { o.Artifacts = "s3://KEY:TOPSECRET@bucket/runs" }, `--artifacts "s3://REDACTED@bucket/runs" holds credentials`},
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			tc.mod(&o)
			_, err := Compile(p, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "TOPSECRET") || strings.Contains(err.Error(), "TOP SECRET") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestStepSecrets: a step's secrets become secretKeyRef variables of its
// pod, or of its rank pods (through the launch plan the launcher builds
// the JobSet from), and of no other step's; no template holds a value.
func TestStepSecrets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	text := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: s}
params:
  db: {type: string, default: db.creds}
steps:
  - name: plain
    component: &c {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: img:1, command: [prog]}
  - name: one
    component: *c
    secrets: [{env: HF_TOKEN, secret: hf, key: token}, {env: DB_USER, secret: "{{params.db}}", key: user, optional: true}]
  - name: gang
    component: *c
    secrets: [{env: DB_PASSWORD, secret: "{{params.db}}", key: pass.word}]
    distributed: {nodes: 2}
  - name: namer
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: n}, image: img:1, command: [prog, "{{outputs.name.path}}"], outputs: [{name: name, type: string}]}
  - name: by-output
    component: *c
    secrets: [{env: API_KEY, secret: "{{steps.namer.outputs.name}}", key: key}]
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	ref := func(env, secret, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
	}
	optional := ref("DB_USER", "{{workflow.parameters.db}}", "user")
	optional.ValueFrom.SecretKeyRef.Optional = ptr(true)
	secretEnv := func(env []corev1.EnvVar) []corev1.EnvVar {
		var out []corev1.EnvVar
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !strings.HasPrefix(e.Name, "AWS_") {
				out = append(out, e)
			}
		}
		return out
	}
	got := map[string][]corev1.EnvVar{}
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.Container != nil {
			got[tmpl.Container.Command[1]] = append(got[tmpl.Container.Command[1]], secretEnv(tmpl.Container.Env)...)
		}
	}
	// exec: the plain step's template has none, the other one HF_TOKEN and
	// the optional DB_USER of the Secret the run names; the launcher pod
	// itself gets no secret, but the param that names its ranks' Secret.
	want := map[string][]corev1.EnvVar{"exec": {ref("HF_TOKEN", "hf", "token"), optional, ref("API_KEY", "{{inputs.parameters.secret-API_KEY}}", "key")}, "launch": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("secret env of the templates (-want +got):\n%s", diff)
	}
	// A Secret named by a step's output: the task gives the output as the
	// template's input, and runs after that step.
	found := false
	for _, task := range wf.Spec.Templates[0].DAG.Tasks {
		if task.Name != "by-output" {
			continue
		}
		found = true
		arg := task.Arguments.GetParameterByName("secret-API_KEY")
		if arg == nil || arg.Value.String() != "{{tasks.namer.outputs.parameters.name}}" || !strings.Contains(task.Depends, "namer.Succeeded") {
			t.Errorf("task by-output: argument %v, depends %q", arg, task.Depends)
		}
	}
	if !found {
		t.Error("no task by-output in the DAG")
	}
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.Container != nil && tmpl.Container.Command[1] == "launch" && !slices.Contains(tmpl.Container.Args, "--param=db={{workflow.parameters.db}}") {
			t.Errorf("the launcher's args %q do not give param db", tmpl.Container.Args)
		}
	}
	sp, err := plan.Build(p, "gang")
	if err != nil {
		t.Fatal(err)
	}
	launch, err := Launch(sp, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The launcher names the Secret by the param's value (FromWire).
	args, err := LauncherArgs(p, sp, "r1", "", map[string]string{"db": "prod-db"})
	if err != nil {
		t.Fatal(err)
	}
	if args.Distributed, err = wire.Encode(launch); err != nil {
		t.Fatal(err)
	}
	req, err := launcher.FromWire(args, "ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	rank := req.JobSet.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	if diff := cmp.Diff([]corev1.EnvVar{ref("DB_PASSWORD", "prod-db", "pass.word")}, secretEnv(rank.Env)); diff != "" {
		t.Errorf("secret env of the rank pods (-want +got):\n%s", diff)
	}
}
