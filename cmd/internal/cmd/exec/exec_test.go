package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	argotemplate "github.com/argoproj/argo-workflows/v3/util/template"
	"github.com/argoproj/argo-workflows/v3/workflow/common"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/plan"
)

// component returns the encoded wire form of a component running sh -c script.
func component(t *testing.T, inputs, outputs []components.ProgramIO, script string, args ...string) string {
	t.Helper()
	s, err := wire.Encode(&components.Program{
		Version: components.ProgramVersion, Name: "test", Inputs: inputs, Outputs: outputs,
		Command: append([]string{"sh", "-c", script, "sh"}, args...),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stepSpec(t *testing.T, es plan.Wiring) string {
	t.Helper()
	es.Version = wire.WiringVersion
	s, err := wire.Encode(&es)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runExec runs `pipectl exec args...` in-process against the store at root.
func runExec(t *testing.T, root string, sigs <-chan os.Signal, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := podutil.Test()
	f := &podutil.Factory{IOStreams: ios, ArtifactsRoot: root, Getenv: func(string) string { return "" }}
	cmd := NewCmdExec(f, func(o *Options) error {
		o.Signals = sigs
		return execRun(o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestExecResolvesPlaceholdersAndPublishes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(src, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := artifacts.Publish(ctx, store, record.OutputKey("run-1", "prep", "train"), src, artifacts.Metadata{Type: components.TypeDataset}); err != nil {
		t.Fatal(err)
	}
	comp := component(t,
		[]components.ProgramIO{{Name: "data", Type: "Dataset"}, {Name: "msg", Type: "string"}, {Name: "n", Type: "int"}, {Name: "tag", Type: "string"}, {Name: "k", Type: "int", Default: ptr("5")}},
		[]components.ProgramIO{{Name: "out", Type: "Artifact"}, {Name: "count", Type: "int"}, {Name: "echo", Type: "string"}},
		`cat "$1" > "$5"; printf '%s|%s|%s|%s|%s|%s' "$2" "$3" "$4" "$PIPECTL_RUN_ID/$PIPECTL_STEP" "$6" "$NOTE" >> "$5"; printf ' 7\n' > "$7"; printf '%s' "$2" > "$8"`,
		"{{inputs.data.path}}", "{{inputs.msg}}", "{{inputs.n}}", "{{inputs.tag}}", "{{outputs.out.path}}", "{{inputs.k}}", "{{outputs.count.path}}", "{{outputs.echo.path}}")
	step := stepSpec(t, plan.Wiring{
		Step: "fit",
		Params: map[string]plan.Text{
			"msg": {{Param: "msg"}},
			"n":   {{Upstream: "n"}},
			"tag": {{Lit: "v-"}, {Param: "msg"}, {Lit: "-x"}},
		},
		Inputs: map[string]plan.OutputRef{"data": {Step: "prep", Output: "train"}},
		Env:    []plan.EnvText{{Name: "NOTE", Value: plan.Text{{Lit: "note:"}, {Param: "msg"}}}},
	})
	msg := "hi {{workflow.name}} $(HOME) {{inputs.n}}"
	outParams := filepath.Join(t.TempDir(), "outputs")
	_, stderr, err := runExec(t, root, nil, "--run=run-1", "--component="+comp, "--step="+step,
		"--param=msg="+wire.EncodeValue(msg), "--upstream=n= 3", "--output-params="+outParams, "--work="+t.TempDir())
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	var got bytes.Buffer
	key := record.OutputKey("run-1", "fit", "out")
	meta, err := artifacts.ReadMetadata(ctx, store, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := artifacts.Copy(ctx, store, key, &got, meta.SHA256); err != nil {
		t.Fatal(err)
	}
	want := "a,b\n1,2\n" + msg + "| 3|v-" + msg + "-x|run-1/fit|5|note:" + msg
	if got.String() != want {
		t.Errorf("output out = %q, want %q", got.String(), want)
	}
	if meta.Producer.Step != "fit" || meta.Type != "Artifact" {
		t.Errorf("metadata = %+v", meta)
	}
	for name, want := range map[string]string{"count": " 7", "echo": wire.EncodeValue(msg)} {
		b, err := os.ReadFile(filepath.Join(outParams, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("output parameter %s = %q, want %q", name, b, want)
		}
	}
}

func TestExecCommandOverride(t *testing.T) {
	root := t.TempDir()
	comp := component(t, []components.ProgramIO{{Name: "msg", Type: "string"}}, []components.ProgramIO{{Name: "echo", Type: "string"}}, `exit 3`)
	step := stepSpec(t, plan.Wiring{Step: "s", Params: map[string]plan.Text{"msg": {{Lit: "hello"}}}})
	outs := t.TempDir()
	_, stderr, err := runExec(t, root, nil, "--run=r", "--component="+comp, "--step="+step, "--output-params="+outs,
		"--", "sh", "-c", `printf '%s!' "$1" > "$2"`, "sh", "{{inputs.msg}}", "{{outputs.echo.path}}")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(outs, "echo")); string(b) != "hello!" {
		t.Errorf("echo = %q, want hello!", b)
	}
}

func TestExecMissingOutput(t *testing.T) {
	root := t.TempDir()
	comp := component(t, nil, []components.ProgramIO{{Name: "model", Type: "Model"}, {Name: "loss", Type: "float"}},
		`printf 0.5 > "$1"`, "{{outputs.loss.path}}")
	_, _, err := runExec(t, root, nil, "--run=r", "--component="+comp, "--step="+stepSpec(t, plan.Wiring{Step: "train"}))
	var me *execution.MissingOutputError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "model") || strings.Contains(err.Error(), "loss") {
		t.Fatalf("err = %v, want a missing output error naming model (only)", err)
	}
	if podutil.Code(err) == 0 {
		t.Error("exit code 0 for a missing output")
	}
}

func TestExecExitCodePropagated(t *testing.T) {
	comp := component(t, nil, nil, `echo failing >&2; exit 7`)
	_, stderr, err := runExec(t, t.TempDir(), nil, "--run=r", "--component="+comp, "--step="+stepSpec(t, plan.Wiring{Step: "s"}))
	if code := podutil.Code(err); code != 7 {
		t.Fatalf("exit code %d (err %v), want 7", code, err)
	}
	if !strings.Contains(stderr, "failing") {
		t.Errorf("stderr %q lacks the program's output", stderr)
	}
}

func TestExecBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"no step":       {"--run=r", "--component=x"},
		"bad component": {"--run=r", "--component=!!", "--step=" + stepSpec(t, plan.Wiring{Step: "s"})},
		"bad value":     {"--run=r", "--component=" + component(t, nil, nil, "true"), "--step=" + stepSpec(t, plan.Wiring{Step: "s"}), "--param=x=pipectl-b64:!!"},
		"stray arg":     {"--run=r", "--component=x", "--step=y", "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runExec(t, t.TempDir(), nil, args...)
			if podutil.Code(err) != podutil.ExitUsage {
				t.Errorf("err = %v (code %d), want a usage error", err, podutil.Code(err))
			}
		})
	}
}

// TestExecForwardsSIGTERM sends SIGTERM to a real pipectl exec process: its
// child traps it (in its own process group) and leaves a mark.
func TestExecForwardsSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pipectl")
	}
	bin := filepath.Join(t.TempDir(), "pipectl")
	build := osexec.Command("go", "build", "-o", bin, "pipectl.dev/pipectl/cmd/pipectl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	ready, mark := filepath.Join(dir, "ready"), filepath.Join(dir, "mark")
	comp := component(t, nil, nil, `trap 'echo "got TERM" > "$2"; exit 42' TERM; echo $$ > "$1"; while :; do sleep 0.05; done`, ready, mark)
	cmd := osexec.Command(bin, "exec", "--artifacts", t.TempDir(), "--run=r", "--component="+comp,
		"--step="+stepSpec(t, plan.Wiring{Step: "s"}), "--grace-period=10s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the program never started\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var xe *osexec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("pipectl exec: %v, want exit code %d\n%s", err, 128+int(syscall.SIGTERM), stderr.String())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s to stop: the child did not get SIGTERM, only SIGKILL after the grace period", took)
	}
	b, err := os.ReadFile(mark)
	if err != nil || strings.TrimSpace(string(b)) != "got TERM" {
		t.Errorf("the child's trap did not run (mark %q, %v)\n%s", b, err, stderr.String())
	}
}

func TestExecInstall(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(src, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "pipectl", "pipectl")
	ios, _, _, _ := podutil.Test()
	cmd := NewCmdExec(&podutil.Factory{IOStreams: ios}, func(o *Options) error {
		o.Executable = func() (string, error) { return src, nil }
		return execRun(o)
	})
	cmd.SetArgs([]string{"--install", dest})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("installed binary: %v %v", st, err)
	}
}

// TestParamWithBracesReachesProgram compiles a pipeline whose parameter
// value holds text Argo and Kubernetes would evaluate, puts the workflow
// through Argo's own substitution passes (the global one over the spec,
// the task's, and the pod template's two), and runs the resulting container
// args with pipectl exec: the program gets the value byte for byte.
func TestParamWithBracesReachesProgram(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: show}
inputs:
  - {name: msg, type: string}
  - {name: label, type: string}
outputs:
  - {name: got, type: Artifact}
  - {name: same, type: string}
image: example/show:1
command: [sh, -c, 'printf "%s\n%s" "$0" "$1" > "$2"; printf "%s" "$0" > "$3"', "{{inputs.msg}}", "{{inputs.label}}", "{{outputs.got.path}}", "{{outputs.same.path}}"]
`)
	writeFile(t, filepath.Join(dir, "p.yaml"), `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: braces}
params:
  msg: {type: string, default: plain}
steps:
  - name: first
    component: c.yaml
    inputs: {msg: "{{params.msg}}", label: "label {{params.msg}} }} end"}
  - name: second
    component: c.yaml
    inputs: {msg: "{{steps.first.outputs.same}}", label: "{{params.msg}}"}
`)
	p, err := pipeline.Load(filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	value := `{{workflow.name}} {{=sprig.upper('x')}} $(HOME) $$ {{inputs.parameters.step}} }}{{`
	root := t.TempDir()
	wf, err := argo.Compile(p, argo.Options{Image: "pipectl:test", Artifacts: root, AllowNonS3: true, Params: map[string]string{"msg": value}})
	if err != nil {
		t.Fatal(err)
	}
	runID := "braces-x7k2p"
	outputs := map[string]map[string]string{} // task → output parameter → value
	for _, task := range argoTasks(t, wf, runID) {
		args := argoPodArgs(t, wf, runID, task, outputs)
		if len(args) < 2 || args[0] != wire.Binary || args[1] != "exec" {
			t.Fatalf("task %s runs %q, want %s exec", task.Name, args, wire.Binary)
		}
		args = localPaths(t, args)
		_, stderr, err := runExec(t, root, nil, args[2:]...)
		if err != nil {
			t.Fatalf("task %s: %v\n%s", task.Name, err, stderr)
		}
		outputs[task.Name] = readOutputParams(t, args)
	}
	ctx := context.Background()
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range map[string]string{
		"first":  value + "\nlabel " + value + " }} end",
		"second": value + "\n" + value,
	} {
		var got bytes.Buffer
		if err := artifacts.Copy(ctx, store, record.OutputKey(runID, step, "got"), &got, ""); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("step %s: the program got %q, want %q", step, got.String(), want)
		}
	}
}

// argoTasks returns the DAG's tasks after Argo's global substitution of the
// workflow spec (which also covers the arguments' values).
func argoTasks(t *testing.T, wf *wfv1.Workflow, runID string) []wfv1.DAGTask {
	t.Helper()
	spec := wf.Spec.DeepCopy()
	templates := spec.Templates
	spec.Templates = nil
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := argotemplate.Replace(string(b), map[string]any{"workflow.name": runID}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(s), spec); err != nil {
		t.Fatal(err)
	}
	wf.Spec.Arguments = spec.Arguments
	for _, tmpl := range templates {
		if tmpl.Name == argo.EntryTemplate {
			return tmpl.DAG.Tasks
		}
	}
	t.Fatal("no DAG template")
	return nil
}

// argoPodArgs resolves a task's arguments and its template's container as
// the Argo controller does, and returns the container's command and args.
func argoPodArgs(t *testing.T, wf *wfv1.Workflow, runID string, task wfv1.DAGTask, outputs map[string]map[string]string) []string {
	t.Helper()
	global := common.Parameters{"workflow.name": runID}
	for _, prm := range wf.Spec.Arguments.Parameters {
		global["workflow.parameters."+prm.Name] = prm.Value.String()
	}
	scope := map[string]any{}
	for k, v := range global {
		scope[k] = v
	}
	for name, outs := range outputs {
		for o, v := range outs {
			scope["tasks."+name+".outputs.parameters."+o] = v
		}
	}
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	s, err := argotemplate.Replace(string(b), scope, false)
	if err != nil {
		t.Fatalf("task %s: %v", task.Name, err)
	}
	var resolved wfv1.DAGTask
	if err := json.Unmarshal([]byte(s), &resolved); err != nil {
		t.Fatal(err)
	}
	var tmpl *wfv1.Template
	for i := range wf.Spec.Templates {
		if wf.Spec.Templates[i].Name == task.Template {
			tmpl = wf.Spec.Templates[i].DeepCopy()
		}
	}
	for i, in := range tmpl.Inputs.Parameters {
		tmpl.Inputs.Parameters[i].Value = resolved.Arguments.GetParameterByName(in.Name).Value
	}
	out, err := common.SubstituteParams(tmpl, global, common.Parameters{})
	if err != nil {
		t.Fatalf("template %s: %v", tmpl.Name, err)
	}
	return append(append([]string{}, out.Container.Command...), out.Container.Args...)
}

// localPaths moves the pod's work and output parameter directories to
// temporary ones.
func localPaths(t *testing.T, args []string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		for _, flag := range []string{"--work=", "--output-params="} {
			if strings.HasPrefix(a, flag) {
				out[i] = flag + t.TempDir()
			}
		}
	}
	return out
}

// readOutputParams reads what exec wrote for Argo's output parameters.
func readOutputParams(t *testing.T, args []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range args {
		dir, ok := strings.CutPrefix(a, "--output-params=")
		if !ok {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
	}
	return out
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestExecFailureBeforeProgramIsLogged: a step that fails before its
// program starts (here a resource given at run time that is no quantity)
// keeps a log saying why, which `pipectl logs` shows, and exits non-zero.
func TestExecFailureBeforeProgramIsLogged(t *testing.T) {
	root := t.TempDir()
	comp := component(t, nil, nil, `echo ran`)
	spec := stepSpec(t, plan.Wiring{Step: "s", Resources: map[string]plan.Text{"memory": {{Param: "mem"}}}})
	_, _, err := runExec(t, root, nil, "--run=r", "--component="+comp, "--step="+spec, "--param=mem=lots")
	want := `resources.memory: "lots" is not a quantity`
	if err == nil || !strings.Contains(err.Error(), want) || podutil.Code(err) == 0 {
		t.Fatalf("err = %v (exit %d), want a failure holding %q", err, podutil.Code(err), want)
	}
	store, err := artifacts.Open(context.Background(), "file://"+root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := artifacts.Copy(context.Background(), store, record.LogKey("r", "s"), &log, ""); err != nil {
		t.Fatalf("no log: %v", err)
	}
	if !strings.Contains(log.String(), "step s failed before its program started: "+want) || strings.Contains(log.String(), "ran") {
		t.Errorf("log %q, want the reason and no program output", log.String())
	}
}
