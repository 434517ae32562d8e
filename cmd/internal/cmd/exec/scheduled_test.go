package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestExecScheduledTime: in a pod, {{run.scheduledTime}} is --scheduled-time,
// as written, in an input and in the env; without it the step fails naming
// the flag.
func TestExecScheduledTime(t *testing.T) {
	root := t.TempDir()
	comp := component(t, []components.ProgramIO{{Name: "at", Type: "string"}}, []components.ProgramIO{{Name: "said", Type: "string"}},
		`printf '%s|%s' "$1" "$AT" > "$2"`, "{{inputs.at}}", "{{outputs.said.path}}")
	step := stepSpec(t, plan.Wiring{
		Step:   "say",
		Params: map[string]plan.Text{"at": {{Lit: "night of "}, {Run: pipeline.RunScheduledTime}}},
		Env:    []plan.EnvText{{Name: "AT", Value: plan.Text{{Run: pipeline.RunScheduledTime}}}},
	})
	const at = "2026-03-29T03:00:00+02:00"
	outParams := filepath.Join(t.TempDir(), "outputs")
	_, stderr, err := runExec(t, root, nil, "--run=nightly-1", "--component="+comp, "--step="+step,
		"--scheduled-time="+at, "--output-params="+outParams, "--work="+t.TempDir())
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(filepath.Join(outParams, "said"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "night of " + at + "|" + at; string(b) != want {
		t.Errorf("said %q, want %q", b, want)
	}
	_, stderr, err = runExec(t, root, nil, "--run=nightly-2", "--component="+comp, "--step="+step, "--work="+t.TempDir())
	if err == nil || !strings.Contains(stderr+err.Error(), "--scheduled-time") {
		t.Errorf("exec without --scheduled-time: %v\n%s", err, stderr)
	}
}
