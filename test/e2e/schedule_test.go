package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Argo's cron controller fires a `* * * * *` schedule created with
// `pipectl schedule create --on argo`; the workflow records its own run in
// the store (runs ls shows it with no cluster at hand), with the schedule
// and the time it was scheduled for, which its step read as
// {{run.scheduledTime}}; schedule get --on argo lists it.
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
	// The workflow records its own run: runs ls, with no cluster to
	// refresh a record from, shows it Running, then Succeeded.
	blind := *a
	blind.env = append(slices.Clone(a.env), "KUBECONFIG="+filepath.Join(t.TempDir(), "no-cluster"))
	type summary struct{ ID, Status, Schedule, ScheduledTime string }
	var first summary
	sawRunning := false
	for first.Status != "Succeeded" {
		if ctx.Err() != nil {
			t.Fatalf("no scheduled run recorded Succeeded in %s: %+v", time.Since(start).Round(time.Second), first)
		}
		time.Sleep(2 * time.Second)
		out, errOut, code := blind.pipectl(ctx, "runs", "ls", "-o", "json")
		if code != 0 {
			if strings.Contains(errOut, "no runs") {
				continue
			}
			t.Fatalf("runs ls: exit %d\n%s", code, errOut)
		}
		var runs []summary
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatalf("runs ls -o json: %v\n%s", err, out)
		}
		for _, r := range runs {
			if r.Schedule == "every-minute" && (first.ID == "" || r.ID == first.ID) {
				first = r
				sawRunning = sawRunning || r.Status == "Running"
			}
		}
	}
	t.Logf("first scheduled run %s for %s recorded Succeeded by its own pods %s after create (seen Running: %v)", first.ID, first.ScheduledTime, time.Since(start).Round(time.Second), sawRunning)
	at, err := time.Parse(time.RFC3339, first.ScheduledTime)
	if err != nil || at.Second() != 0 || at.Before(start.Add(-time.Minute)) {
		t.Fatalf("scheduled time %q (%v), created at %s", first.ScheduledTime, err, start.UTC())
	}
	// schedule get reads the CronWorkflow and lists the run.
	sg, errOut, code := a.pipectl(ctx, "schedule", "get", "every-minute", "--on", "argo", "-n", a.ns, "-o", "json")
	var v struct {
		Last string                               `json:"last"`
		Runs []struct{ Time, Run, Status string } `json:"runs"`
	}
	if code != 0 || json.Unmarshal([]byte(sg), &v) != nil || v.Last == "" || !slices.ContainsFunc(v.Runs, func(r struct{ Time, Run, Status string }) bool {
		return r.Run == first.ID && r.Time == first.ScheduledTime && r.Status == "Succeeded"
	}) {
		t.Fatalf("schedule get: exit %d\n%s\n%s", code, sg, errOut)
	}
	out, errOut, code := a.pipectl(ctx, "runs", "get", first.ID, "-o", "json")
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
	if rec.Status != "Succeeded" || rec.On != "argo" || rec.Schedule != "every-minute" || rec.ScheduledTime != first.ScheduledTime ||
		len(rec.Steps) != 1 || len(rec.Steps[0].Outputs) != 1 || rec.Steps[0].Outputs[0].Value != first.ScheduledTime {
		t.Fatalf("run record: %s", out)
	}
}
