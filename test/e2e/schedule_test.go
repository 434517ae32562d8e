package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Argo's cron controller fires a `* * * * *` schedule created with
// `pipectl schedule create --on argo`; the workflow records its own run in
// the store (runs ls shows it with no cluster at hand), with the schedule
// and the time it was scheduled for, which its step read as
// {{run.scheduledTime}}; schedule get --on argo lists it. The run lasts
// over a minute: with --concurrency Forbid (and --catch-up none) the next
// minute, due while it runs, has no run.
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
      command: [sh, -c, 'printf "%s" "$0" > "$1"; sleep 65', "{{inputs.when}}", "{{outputs.when.path}}"]
    inputs: {when: "{{run.scheduledTime}}"}
`)
	cluster := append(append([]string{"-n", a.ns, "--on", "argo"}, imageFlags...),
		"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://"+a.c.MinIOEndpoint, "--service-account", "pipectl-step")
	start := time.Now()
	_, errOut, code := a.pipectl(ctx, append([]string{"schedule", "create", file, "--name", "every-minute", "--cron", "* * * * *", "--concurrency", "Forbid", "--catch-up", "none"}, cluster...)...)
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
	// Forbid: the next minute came while the run ran, and was skipped.
	next := at.Add(time.Minute)
	if wait := time.Until(next.Add(15 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	out, _, _ := blind.pipectl(ctx, "runs", "ls", "-o", "json")
	if strings.Contains(out, `"scheduledTime": "`+next.Format(time.RFC3339)) || strings.Contains(out, `"scheduledTime":"`+next.Format(time.RFC3339)) {
		t.Fatalf("Forbid: %s ran while the run of %s was active:\n%s", next.Format(time.RFC3339), first.ScheduledTime, out)
	}
	wfs, err := a.c.Client.Discovery().RESTClient().Get().AbsPath("/apis/argoproj.io/v1alpha1/namespaces/" + a.ns + "/workflows").DoRaw(ctx)
	if err != nil || strings.Contains(string(wfs), `"name":"every-minute-`+strconv.FormatInt(next.Unix(), 10)+`"`) {
		t.Fatalf("Forbid: workflows: %v\n%s", err, wfs)
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
	out, errOut, code = a.pipectl(ctx, "runs", "get", first.ID, "-o", "json")
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

// Backfill on both backends: three days of a nightly schedule run three
// runs, oldest first, each with its own {{run.scheduledTime}} (the record's
// scheduled time, and what its step saw), the same on both; a second
// backfill of the same days runs none.
func TestScheduleBackfillBothBackends(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nightly}
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
	want := []string{"2026-01-01T02:00:00+01:00", "2026-01-02T02:00:00+01:00", "2026-01-03T02:00:00+01:00"}
	type summary struct {
		Times, HadRun, Succeeded int
		Runs                     []struct{ Time, Run, Status string }
	}
	backends := map[string][]string{
		"local": {"--artifacts", "s3://" + a.bucket + "/backfill-local"},
		"argo": append(append([]string{"--artifacts", "s3://" + a.bucket + "/backfill-argo", "-n", a.ns, "--on", "argo"}, imageFlags...),
			"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://"+a.c.MinIOEndpoint, "--service-account", "pipectl-step"),
	}
	for _, on := range []string{"local", "argo"} {
		t.Run(on, func(t *testing.T) {
			t.Parallel()
			flags := backends[on]
			start := time.Now()
			if _, errOut, code := a.pipectl(ctx, append([]string{"schedule", "create", file, "--name", "nightly-" + on, "--cron", "0 2 * * *", "--timezone", "Europe/Berlin", "--catch-up", "none", "--suspend"}, flags...)...); code != 0 {
				t.Fatalf("schedule create: exit %d\n%s", code, errOut)
			}
			if on == "argo" {
				t.Cleanup(func() {
					a.pipectl(context.Background(), append([]string{"schedule", "delete", "nightly-" + on}, flags[:6]...)...)
				})
			}
			store := flags[:2]
			if on == "argo" {
				store = flags[:6] // --artifacts, -n, --on
			}
			fill := func() (summary, string) {
				out, errOut, code := a.pipectl(ctx, append([]string{"schedule", "backfill", "nightly-" + on, "--from", "2026-01-01", "--to", "2026-01-04", "--parallelism", "2", "-o", "json"}, store...)...)
				var sum summary
				if code != 0 || json.Unmarshal([]byte(out), &sum) != nil {
					t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
				}
				return sum, errOut
			}
			sum, progress := fill()
			var times []string
			for _, r := range sum.Runs {
				times = append(times, r.Time)
				if r.Status != "Succeeded" {
					t.Errorf("run %s of %s: %s", r.Run, r.Time, r.Status)
				}
				out, errOut, code := a.pipectl(ctx, append([]string{"runs", "get", r.Run, "-o", "json"}, store[:2]...)...)
				var rec struct {
					Status, Schedule, ScheduledTime string
					Steps                           []struct{ Outputs []struct{ Value string } }
				}
				if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Status != "Succeeded" || rec.Schedule != "nightly-"+on ||
					rec.ScheduledTime != r.Time || len(rec.Steps) != 1 || len(rec.Steps[0].Outputs) != 1 || rec.Steps[0].Outputs[0].Value != r.Time {
					t.Errorf("run %s of %s: exit %d\n%s%s", r.Run, r.Time, code, out, errOut)
				}
			}
			if !slices.Equal(times, want) || sum.Times != 3 || sum.HadRun != 0 || sum.Succeeded != 3 || !strings.Contains(progress, "[3/3]") {
				t.Fatalf("first backfill: %+v\n%s", sum, progress)
			}
			t.Logf("%s: 3 runs backfilled in %s", on, time.Since(start).Round(time.Second))
			again, progress := fill()
			if again.Times != 3 || again.HadRun != 3 || len(again.Runs) != 0 {
				t.Fatalf("second backfill: %+v\n%s", again, progress)
			}
		})
	}
}

// Ctrl-C of a backfill on Argo leaves nothing running, as a local one
// does: its workflow is stopped and followed to its end, its run recorded
// (not Running), and the backfill exits 130 with the run in its summary.
func TestArgoBackfillInterrupted(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: slow}
steps:
  - name: wait
    component:
      metadata: {name: wait}
      image: e2e-shell:1
      command: [sh, -c, 'sleep 600']
`)
	flags := append(append([]string{"-n", a.ns, "--on", "argo"}, imageFlags...),
		"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://"+a.c.MinIOEndpoint, "--service-account", "pipectl-step")
	if _, errOut, code := a.pipectl(ctx, append([]string{"schedule", "create", file, "--name", "slow", "--cron", "0 2 * * *", "--timezone", "Europe/Berlin", "--catch-up", "none", "--suspend"}, flags...)...); code != 0 {
		t.Fatalf("schedule create: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() {
		a.pipectl(context.Background(), append([]string{"schedule", "delete", "slow"}, flags[:4]...)...)
	})
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	wf := "slow-" + strconv.FormatInt(time.Date(2026, 1, 1, 2, 0, 0, 0, berlin).Unix(), 10)

	cmd := exec.CommandContext(ctx, images.pipectl, append([]string{"schedule", "backfill", "slow", "--from", "2026-01-01", "--to", "2026-01-02", "-o", "json"}, flags[:4]...)...)
	cmd.Env = a.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the step's pod runs.
	for running := false; !running; time.Sleep(200 * time.Millisecond) {
		if ctx.Err() != nil {
			t.Fatalf("no running pod of workflow %s: %v\n%s", wf, ctx.Err(), errOut.String())
		}
		pods, err := a.c.Client.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: "workflows.argoproj.io/workflow=" + wf})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			running = running || p.Status.Phase == corev1.PodRunning
		}
	}
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("backfill after Ctrl-C: %v, want exit 130\n%s", err, errOut.String())
	}
	t.Logf("backfill ended %s after Ctrl-C", time.Since(sent).Round(time.Millisecond))
	dyn, err := dynamic.NewForConfig(a.c.Config)
	if err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(workflowsGVR).Namespace(a.ns).Get(ctx, wf, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase != "Failed" && phase != "Error" {
		t.Fatalf("workflow %s after the backfill's Ctrl-C: phase %q, want it stopped", wf, phase)
	}
	var sum struct {
		NotRun int
		Runs   []struct{ Run, Status string }
	}
	if json.Unmarshal(out.Bytes(), &sum) != nil || len(sum.Runs) != 1 || sum.Runs[0].Run != wf || sum.Runs[0].Status == "Succeeded" || sum.Runs[0].Status == "Running" {
		t.Fatalf("summary: %s\n%s", out.String(), errOut.String())
	}
	rec, recErr, code := a.pipectl(ctx, "runs", "get", wf, "-o", "json")
	var r struct{ Status string }
	if code != 0 || json.Unmarshal([]byte(rec), &r) != nil || r.Status == "Running" || r.Status == "Succeeded" {
		t.Fatalf("run %s after the backfill's Ctrl-C: exit %d\n%s%s", wf, code, rec, recErr)
	}
	t.Logf("run %s: %s", wf, r.Status)
}
