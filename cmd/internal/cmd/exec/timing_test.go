package exec

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/plan"
)

// A step's inputs record says when the runtime started, had its inputs,
// started and ended the program and published its outputs, in that order
// and around the program's own run (it sleeps 0.2 s).
func TestExecRecordsItsPhases(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	comp := component(t, nil, []components.ProgramIO{{Name: "n", Type: "int"}}, `sleep 0.2; printf 1 > "$1"`, "{{outputs.n.path}}")
	step := stepSpec(t, plan.Wiring{Step: "nap"})
	began := time.Now()
	if _, stderr, err := runExec(t, root, nil, "--run=run-1", "--component="+comp, "--step="+step, "--cache=off", "--work="+t.TempDir()); err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	ended := time.Now()
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.Get(ctx, record.InputsKey("run-1", "nap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var rec record.StepInputs
	if err := json.Unmarshal(b, &rec); err != nil || rec.Timing == nil {
		t.Fatalf("inputs record %s: %v, want its timing", b, err)
	}
	tm := rec.Timing
	phases := []time.Time{began, tm.ExecStarted, tm.InputsReady, tm.ProgramStarted, tm.ProgramEnded, tm.OutputsPublished, ended}
	for i := 1; i < len(phases); i++ {
		if phases[i].Before(phases[i-1]) {
			t.Errorf("phase %d (%s) before phase %d (%s): %s", i, phases[i], i-1, phases[i-1], b)
		}
	}
	if ran := tm.ProgramEnded.Sub(tm.ProgramStarted); ran < 200*time.Millisecond {
		t.Errorf("the program ran %s by the record, want ≥ 0.2 s: %s", ran, b)
	}
}
