package exec

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestExecLoopCollectFinally runs, as the pods of a compiled workflow do,
// the iterations of a loop step (--iteration), a step collecting their
// outputs from the store, and a finally step reading the run's outcome
// from Argo's variables.
func TestExecLoopCollectFinally(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	train := component(t,
		[]components.ProgramIO{{Name: "lr", Type: "float"}},
		[]components.ProgramIO{{Name: "model", Type: "Model"}, {Name: "score", Type: "float"}},
		`printf 'model %s' "$1" > "$2"; printf '%s' "$1" > "$3"`, "{{inputs.lr}}", "{{outputs.model.path}}", "{{outputs.score.path}}")
	loop := stepSpec(t, plan.Wiring{Step: "train", Params: map[string]plan.Text{"lr": {{Item: &plan.ItemRef{Field: "lr"}}}}, Items: plan.Text{{Param: "grid"}}})
	grid := `[{"lr": 0.10}, {"lr": 1e-3}]`
	for i := range 2 {
		if _, stderr, err := runExec(t, root, nil, "--run=r", "--component="+train, "--step="+loop, "--param=grid="+grid,
			"--iteration="+strconv.Itoa(i), "--work="+t.TempDir()); err != nil {
			t.Fatalf("iteration %d: %v\n%s", i, err, stderr)
		}
	}
	if _, err := recordstore.ReadOutputs(ctx, store, "r", "train[1]"); err != nil {
		t.Fatalf("iteration 1 published no outputs record: %v", err)
	}
	if _, err := store.Stat(ctx, record.LogKey("r", "train[1]")); err != nil {
		t.Errorf("iteration 1 kept no log: %v", err)
	}
	if _, _, err := runExec(t, root, nil, "--run=r", "--component="+train, "--step="+loop, "--param=grid="+grid, "--iteration=2"); err == nil {
		t.Error("iteration 2 of 2 ran")
	}

	pick := component(t,
		[]components.ProgramIO{{Name: "scores", Type: "json"}, {Name: "models", Type: "Model"}},
		[]components.ProgramIO{{Name: "report", Type: "string"}},
		`printf '%s %s %s' "$1" "$(cat "$2/0")" "$(cat "$2/1")" > "$3"`, "{{inputs.scores}}", "{{inputs.models.path}}", "{{outputs.report.path}}")
	collect := stepSpec(t, plan.Wiring{Step: "pick", Collected: map[string]plan.OutputRef{"scores": {Step: "train", Output: "score"}, "models": {Step: "train", Output: "model"}}})
	outParams := filepath.Join(t.TempDir(), "outputs")
	if _, stderr, err := runExec(t, root, nil, "--run=r", "--component="+pick, "--step="+collect, "--output-params="+outParams); err != nil {
		t.Fatalf("pick: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(outParams, "report")); string(b) != "[0.10,1e-3] model 0.10 model 1e-3" {
		t.Errorf("collected = %q", b)
	}

	notify := component(t, []components.ProgramIO{{Name: "msg", Type: "string"}}, []components.ProgramIO{{Name: "said", Type: "string"}},
		`printf '%s' "$1" > "$2"`, "{{inputs.msg}}", "{{outputs.said.path}}")
	final := stepSpec(t, plan.Wiring{Step: "notify", Params: map[string]plan.Text{"msg": {{Run: "status"}, {Lit: " "}, {Run: "failedSteps"}}}})
	steps := base64.StdEncoding.EncodeToString([]byte(`[{"step":"train","task":"train"},{"step":"notify","task":"notify"}]`))
	failures := strconv.Quote(`[{"displayName":"train(1:1)","phase":"Failed"},{"displayName":"train","phase":"Failed"}]`)
	if _, stderr, err := runExec(t, root, nil, "--run=r", "--component="+notify, "--step="+final, "--output-params="+outParams,
		"--argo-status=Failed", "--argo-failures="+failures, "--argo-steps="+steps); err != nil {
		t.Fatalf("notify: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(outParams, "said")); !bytes.Equal(b, []byte(`Failed ["train[1]"]`)) {
		t.Errorf("finally step got %q", b)
	}
}
