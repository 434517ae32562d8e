package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Argo's cron controller fires a `* * * * *` schedule created with
// `pipectl schedule create --on argo`; `schedule get --on argo` records
// its run in the store like any run --on argo, with the schedule and the
// time it was scheduled for, which its step read as {{run.scheduledTime}}.
func TestArgoScheduleFires(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: stamped}
steps:
  - name: stamp
    component:
      metadata: {name: stamp}
      image: e2e-shell:1
      inputs: [{name: when, type: string}]
      outputs: [{name: when, type: string}]
      command: [sh, -c, 'printf "%s" "$0" > "$1"', "{{inputs.when}}", "{{outputs.when.path}}"]
    inputs: {when: "{{run.scheduledTime}}"}
`)
	cluster := append(append([]string{"-n", a.ns, "--on", "argo"}, imageFlags...),
		"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://"+a.c.MinIOEndpoint, "--service-account", "pipectl-step")
	start := time.Now()
	_, errOut, code := a.pipectl(ctx, append([]string{"schedule", "create", file, "--name", "every-minute", "--cron", "* * * * *", "--concurrency", "Forbid"}, cluster...)...)
	if code != 0 || !strings.Contains(errOut, "Schedule every-minute created as CronWorkflow every-minute in namespace "+a.ns) {
		t.Fatalf("schedule create: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() {
		a.pipectl(context.Background(), "schedule", "delete", "every-minute", "--on", "argo", "-n", a.ns)
	})
	// Created again: refused, naming apply.
	if _, errOut, code := a.pipectl(ctx, append([]string{"schedule", "create", file, "--name", "every-minute", "--cron", "* * * * *", "--concurrency", "Forbid"}, cluster...)...); code == 0 || !strings.Contains(errOut, "schedule apply --on argo") {
		t.Fatalf("second create: exit %d\n%s", code, errOut)
	}
	type view struct {
		Last string                               `json:"last"`
		Runs []struct{ Time, Run, Status string } `json:"runs"`
	}
	var v view
	for {
		out, errOut, code := a.pipectl(ctx, "schedule", "get", "every-minute", "--on", "argo", "-n", a.ns, "-o", "json")
		if code != 0 {
			t.Fatalf("schedule get: exit %d\n%s", code, errOut)
		}
		v = view{}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("schedule get -o json: %v\n%s", err, out)
		}
		if len(v.Runs) > 0 && v.Runs[len(v.Runs)-1].Status == "Succeeded" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no scheduled run succeeded in %s: %+v", time.Since(start).Round(time.Second), v)
		}
		time.Sleep(5 * time.Second)
	}
	first := v.Runs[len(v.Runs)-1]
	t.Logf("first scheduled run %s for %s succeeded %s after create; last scheduled %s", first.Run, first.Time, time.Since(start).Round(time.Second), v.Last)
	at, err := time.Parse(time.RFC3339, first.Time)
	if err != nil || at.Second() != 0 || at.Before(start.Add(-time.Minute)) || v.Last == "" {
		t.Fatalf("scheduled time %q (%v), last %q, created at %s", first.Time, err, v.Last, start.UTC())
	}
	out, errOut, code := a.pipectl(ctx, "runs", "get", first.Run, "-o", "json")
	if code != 0 {
		t.Fatalf("runs get: exit %d\n%s", code, errOut)
	}
	var rec struct {
		Status, On, Schedule, ScheduledTime string
		Steps                               []struct {
			Name    string
			Outputs []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Status != "Succeeded" || rec.On != "argo" || rec.Schedule != "every-minute" || rec.ScheduledTime != first.Time ||
		len(rec.Steps) != 1 || len(rec.Steps[0].Outputs) != 1 || rec.Steps[0].Outputs[0].Value != first.Time {
		t.Fatalf("run record: %s", out)
	}
	// runs ls shows it with its schedule.
	if out, _, _ := a.pipectl(ctx, "runs", "ls"); !strings.Contains(out, first.Run) {
		t.Errorf("runs ls does not show %s:\n%s", first.Run, out)
	}
}
