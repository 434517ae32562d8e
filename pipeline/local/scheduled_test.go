package local

import (
	"context"
	"testing"
	"time"

	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestRunScheduledTime: {{run.scheduledTime}} reaches a step's input and its
// env exactly as the schedule gave it, and the run record names the
// schedule and the time; a run by hand reads its start time (UTC).
func TestRunScheduledTime(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `steps:
  - name: say
    inputs: {at: "night of {{run.scheduledTime}}"}
    env: [{name: AT, value: "{{run.scheduledTime}}"}]
` + shComponent("say", "{name: at, type: string}", "{name: said, type: string}", `printf '%s|%s' "$1" "$AT" > "$2"`, "{{inputs.at}}", "{{outputs.said.path}}") + `
`)
	const at = "2026-03-29T03:00:00+02:00"
	run, err := f.run(context.Background(), p, nil, func(r *Runner) { r.Schedule, r.ScheduledTime = "nightly", at })
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	want := "night of " + at + "|" + at
	if out := run.Step("say").Outputs; len(out) != 1 || out[0].Value == nil || *out[0].Value != want {
		t.Errorf("say said %+v, want %q", out, want)
	}
	stored, err := recordstore.ReadRun(context.Background(), f.store, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Schedule != "nightly" || stored.ScheduledTime != at {
		t.Errorf("record: schedule %q scheduledTime %q, want nightly %s", stored.Schedule, stored.ScheduledTime, at)
	}
	// By hand: the start time, and nothing recorded as scheduled.
	run, err = f.run(context.Background(), p, nil, func(r *Runner) { r.NoCache = true })
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	start := run.Started.UTC().Format(time.RFC3339)
	if out := run.Step("say").Outputs; *out[0].Value != "night of "+start+"|"+start || run.Schedule != "" || run.ScheduledTime != "" {
		t.Errorf("a run by hand said %q (schedule %q at %q), want its start %s", *out[0].Value, run.Schedule, run.ScheduledTime, start)
	}
}
