package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
)

// triggerPipeline: make exits {{params.code}} after writing its outputs;
// doomed reads make's output as usual; cleanup (trigger: completed) runs
// after make and doomed whatever their outcome and reports what it got:
// make's message or its input's default, make's data or none; report reads
// cleanup's note. In the finally steps, notify exits {{params.code}} and
// log (trigger: completed) reads what notify sent, or its default.
var triggerPipeline = header + `params:
  code: {type: int, default: 3}
steps:
  - name: make
` + `    inputs: {code: "{{params.code}}"}` + shComponent("make", "{name: code, type: int}", "{name: msg, type: string}, {name: data, type: Dataset}",
	`printf made > "$1"; printf data > "$2"; exit "$3"`, "{{outputs.msg.path}}", "{{outputs.data.path}}", "{{inputs.code}}") + `
  - name: doomed
    inputs: {data: "{{steps.make.outputs.data}}"}` + shComponent("doomed", "{name: data, type: Dataset}", "", `cat "$1"`, "{{inputs.data.path}}") + `
  - name: cleanup
    trigger: completed
    after: [doomed]
    inputs: {message: "{{steps.make.outputs.msg}}", data: "{{steps.make.outputs.data}}"}` +
	shComponent("cleanup", `{name: message, type: string, default: "none $(x)"}, {name: data, type: Dataset, optional: true}`, "{name: note, type: string}",
		`if [ -n "$3" ]; then d=$(cat "$3"); else d=absent; fi; printf '%s|%s' "$2" "$d" > "$1"`,
		"{{outputs.note.path}}", "{{inputs.message}}", "{{inputs.data.path}}") + `
  - name: report
    inputs: {note: "{{steps.cleanup.outputs.note}}"}` + shComponent("report", "{name: note, type: string}", "{name: seen, type: string}", `printf '%s' "$2" > "$1"`, "{{outputs.seen.path}}", "{{inputs.note}}") + `
finally:
  - name: notify
    inputs: {code: "{{params.code}}"}` + shComponent("notify", "{name: code, type: int}", "{name: sent, type: string}", `printf sent > "$1"; exit "$2"`, "{{outputs.sent.path}}", "{{inputs.code}}") + `
  - name: log
    trigger: completed
    inputs: {sent: "{{steps.notify.outputs.sent}}"}` + shComponent("log", `{name: sent, type: string, default: nothing}`, "{name: got, type: string}", `printf '%s' "$2" > "$1"`, "{{outputs.got.path}}", "{{inputs.sent}}") + `
`

// outputValue is the value of output name of step s in run, "" when none.
func outputValue(run *record.Run, s, name string) string {
	for _, o := range run.Step(s).Outputs {
		if o.Name == name && o.Value != nil {
			return *o.Value
		}
	}
	return ""
}

// TestRunTriggerCompleted: a step with trigger: completed runs once the
// steps it depends on ended whatever their outcome (failed, skipped),
// its inputs given their outputs when they succeeded, else the inputs'
// defaults (an optional artifact none); the run still fails when a step
// failed. A finally step may have the trigger too.
func TestRunTriggerCompleted(t *testing.T) {
	f := newFixture(t)
	p := f.load(triggerPipeline)
	ctx := context.Background()

	run, err := f.run(ctx, p, nil, nil)
	var rerr *RunError
	if !errors.As(err, &rerr) || run.Status != record.StatusFailed {
		t.Fatalf("Run err = %v (status %s), want a RunError for a failed run\n%s", err, run.Status, f.status)
	}
	want := map[string]string{"make": "Failed", "doomed": "Skipped", "cleanup": "Succeeded", "report": "Succeeded", "notify": "Failed", "log": "Succeeded"}
	if got := stepStatus(run); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v\n%s", got, want, f.status)
	}
	if want := "failed steps: make, notify"; run.Message != want {
		t.Errorf("run message %q, want %q", run.Message, want)
	}
	for _, c := range []struct{ step, output, want string }{
		{"cleanup", "note", "none $(x)|absent"}, {"report", "seen", "none $(x)|absent"}, {"log", "got", "nothing"},
	} {
		if got := outputValue(run, c.step, c.output); got != c.want {
			t.Errorf("%s's %s = %q, want %q", c.step, c.output, got, c.want)
		}
	}

	run, err = f.run(ctx, p, map[string]string{"code": "0"}, nil)
	if err != nil || run.Status != record.StatusSucceeded {
		t.Fatalf("Run -p code=0: %v (status %s)\n%s", err, run.Status, f.status)
	}
	for _, c := range []struct{ step, output, want string }{
		{"cleanup", "note", "made|data"}, {"report", "seen", "made|data"}, {"log", "got", "sent"},
	} {
		if got := outputValue(run, c.step, c.output); got != c.want {
			t.Errorf("code=0: %s's %s = %q, want %q", c.step, c.output, got, c.want)
		}
	}
}

// TestRunTriggerCompletedNested: a pipeline used as a step's component
// may have a step with trigger: completed; expanded, it runs after the
// inner step it reads, which failed, with its input's default.
func TestRunTriggerCompletedNested(t *testing.T) {
	f := newFixture(t)
	inner := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: inner}
steps:
  - name: make
` + shComponent("make", "", "{name: msg, type: string}", `printf made > "$1"; exit 2`, "{{outputs.msg.path}}") + `
  - name: tidy
    trigger: completed
    inputs: {message: "{{steps.make.outputs.msg}}"}` + shComponent("tidy", `{name: message, type: string, default: fallback}`, "{name: got, type: string}", `printf '%s' "$2" > "$1"`, "{{outputs.got.path}}", "{{inputs.message}}") + `
outputs:
  got: "{{steps.tidy.outputs.got}}"
`
	if err := os.WriteFile(filepath.Join(f.dir, "inner.pipeline.yaml"), []byte(inner), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.load(header + `steps:
  - name: stage
    component: inner.pipeline.yaml
`)
	if s := p.Step("stage" + pipeline.NestedSep + "tidy"); s == nil || !s.AfterCompleted() {
		t.Fatalf("step stage.tidy: %+v, want trigger: completed", s)
	}
	run, err := f.run(context.Background(), p, nil, nil)
	if err == nil || run.Status != record.StatusFailed {
		t.Fatalf("Run err = %v, want the run failed", err)
	}
	if got := outputValue(run, "stage.tidy", "got"); got != "fallback" || run.Step("stage.make").Status != record.StatusFailed {
		t.Errorf("stage.tidy got %q (stage.make %s), want fallback (Failed)\n%s", got, run.Step("stage.make").Status, f.status)
	}
}

// TestRunKFPv2IgnoreUpstreamFailure: a KFP v2 task with
// ignore_upstream_failure() runs after its upstream task failed, its input
// taking the component's default, and the run fails; when the upstream
// task succeeds, its output flows.
func TestRunKFPv2IgnoreUpstreamFailure(t *testing.T) {
	f := newFixture(t)
	p, err := pipeline.Load("../testdata/kfpv2/ignore_upstream.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := f.run(ctx, p, nil, nil)
	if err == nil || run.Status != record.StatusFailed || run.Step("fail-op").Status != record.StatusFailed {
		t.Fatalf("Run err = %v, status %s; want the run and fail-op failed\n%s", err, run.Status, f.status)
	}
	if got := outputValue(run, "print-op", "got"); got != "default" {
		t.Errorf("print-op got %q, want default\n%s", got, f.status)
	}
	run, err = f.run(ctx, p, map[string]string{"code": "0"}, nil)
	if err != nil {
		t.Fatalf("Run -p code=0: %v\n%s", err, f.status)
	}
	if got := outputValue(run, "print-op", "got"); got != "made" {
		t.Errorf("code=0: print-op got %q, want made", got)
	}
}
