package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const pipelineText = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nightly}
params:
  day: {type: string}
  epochs: {type: int, default: 1}
steps:
  - name: echo
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: echo}
      inputs: [{name: day, type: string}]
      command: [echo, "{{inputs.day}}"]
    inputs: {day: "{{params.day}}"}
`

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pipeline.yaml", pipelineText)
	p := writeFile(t, dir, "schedule.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Schedule
metadata: {name: nightly}
pipeline: pipeline.yaml
cron: "0 2 * * *"
timezone: Europe/Berlin
params:
  day: "{{run.scheduledTime}}"
  epochs: 3
concurrency: Forbid
`)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "nightly" || s.Pipeline != filepath.Join(dir, "pipeline.yaml") || s.CatchUp != CatchUpLatest || s.Concurrency != ConcurrencyForbid || s.Params["epochs"] != "3" {
		t.Errorf("loaded %+v", s)
	}
	if _, err := s.CheckPipeline(); err != nil {
		t.Errorf("CheckPipeline: %v", err)
	}
	at := time.Date(2026, 12, 7, 2, 0, 0, 0, mustCron(t, s.Cron, s.Timezone).Location())
	if got := s.RunParams(at)["day"]; got != "2026-12-07T02:00:00+01:00" {
		t.Errorf("RunParams day = %q", got)
	}
	s.Params["epochs"] = "three"
	if _, err := s.CheckPipeline(); err == nil || !strings.Contains(err.Error(), "params: ") {
		t.Errorf("CheckPipeline of a bad int param: %v", err)
	}
}

func TestLoadErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "schedule.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Schedule
metadata: {name: Nightly_Job}
pipeline: pipeline.yaml
cron: "0 25 * * *"
timezone: Mars/Olympus
concurrency: Sometimes
catchUp: everything
`)
	_, err := Load(p)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		p + ":3:18: metadata.name: \"Nightly_Job\" is not a valid name",
		p + ":6:11: timezone: invalid time zone \"Mars/Olympus\"",
		p + ":7:14: concurrency: unknown policy \"Sometimes\" (want Allow, Forbid or Replace)",
		p + ":8:10: catchUp: unknown policy \"everything\" (want all, latest or none)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	p = writeFile(t, dir, "bad.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Schedule
metadata: {name: nightly}
pipeline: pipeline.yaml
cron: "0 25 * * *"
cronn: x
`)
	_, err = Load(p)
	if err == nil || !strings.Contains(err.Error(), p+":6:1: cronn: unknown field \"cronn\"") {
		t.Errorf("unknown field: %v", err)
	}
	p = writeFile(t, dir, "cron.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Schedule
metadata: {name: nightly}
pipeline: pipeline.yaml
cron: "0 25 * * *"
`)
	_, err = Load(p)
	if err == nil || !strings.Contains(err.Error(), p+":5:7: cron: invalid cron expression \"0 25 * * *\"") {
		t.Errorf("bad cron: %v", err)
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{"nightly": true, "a-b-1": true, "": false, "Nightly": false, "a.b": false, strings.Repeat("a", 53): false, strings.Repeat("a", 52): true} {
		if got := CheckName(name) == ""; got != ok {
			t.Errorf("CheckName(%q) ok = %v, want %v", name, got, ok)
		}
	}
}
