package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/schedule"
	"pipectl.dev/pipectl/pipeline/schedulestore"
)

// pipelineText writes its {{run.scheduledTime}} and its day param as its
// output; it waits while the file named by its gate param exists.
const pipelineText = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nightly}
params:
  day: {type: string, default: none}
  gate: {type: string, default: /nonexistent}
steps:
  - name: say
    inputs: {at: "{{run.scheduledTime}}", day: "{{params.day}}", gate: "{{params.gate}}"}
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: say}
      inputs: [{name: at, type: string}, {name: day, type: string}, {name: gate, type: string}]
      outputs: [{name: said, type: string}]
      command: [sh, -c, 'while [ -e "$3" ]; do sleep 0.05; done; printf "%s|%s" "$1" "$2" > "$4"', say, "{{inputs.at}}", "{{inputs.day}}", "{{inputs.gate}}", "{{outputs.said.path}}"]
`

type fixture struct {
	t      *testing.T
	dir    string
	store  *artifacts.Local
	status *componentstest.Buffer
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(pipelineText), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, store: store, status: &componentstest.Buffer{}}
}

// schedule stores a schedule of the fixture's pipeline created at created.
func (f *fixture) schedule(name, cron, catchUp, concurrency string, created time.Time, params map[string]string) *schedule.Schedule {
	f.t.Helper()
	s := &schedule.Schedule{Name: name, Pipeline: filepath.Join(f.dir, "pipeline.yaml"), Cron: cron, Params: params, CatchUp: catchUp, Concurrency: concurrency, Created: created, Updated: created}
	s.Default()
	if err := schedulestore.Put(context.Background(), f.store, s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fixture) run() RunFunc {
	return Local(func() *local.Runner {
		return &local.Runner{Store: f.store, Logs: &componentstest.Buffer{}, Status: &componentstest.Buffer{}, WorkDir: filepath.Join(f.dir, "work"), GracePeriod: time.Second}
	})
}

// runs are the said outputs of the store's runs of schedule name, by
// scheduled time.
func (f *fixture) runs(name string) map[string]string {
	f.t.Helper()
	list, err := recordstore.ListRuns(context.Background(), f.store, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range list {
		if r.Schedule != name {
			continue
		}
		if _, dup := out[r.ScheduledTime]; dup {
			f.t.Errorf("two runs of %s for %s", name, r.ScheduledTime)
		}
		said := r.Status
		if s := r.Step("say"); s != nil && len(s.Outputs) == 1 && s.Outputs[0].Value != nil {
			said = *s.Outputs[0].Value
		}
		out[r.ScheduledTime] = said
	}
	return out
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestBackfillThreeDays: a backfill of 3 days of a daily schedule runs 3
// runs, oldest first, each with its own run.scheduledTime (in its params
// too); a second backfill of the same range runs none.
func TestBackfillThreeDays(t *testing.T) {
	f := newFixture(t)
	f.schedule("nightly", "0 2 * * *", "", "", at("2026-02-01T00:00:00Z"), map[string]string{"day": "day of " + schedule.ScheduledTimeRef})
	b := &Backfill{Store: f.store, Run: f.run(), Status: f.status, Parallelism: 2}
	start := time.Now()
	sum, err := b.Fill(context.Background(), "nightly", at("2026-01-01T00:00:00Z"), at("2026-01-04T00:00:00Z"))
	if err != nil {
		t.Fatalf("Fill: %v\n%s", err, f.status)
	}
	t.Logf("backfill of 3 days: %v", time.Since(start))
	if sum.Times != 3 || len(sum.Runs) != 3 || sum.Succeeded != 3 || sum.HadRun != 0 {
		t.Errorf("first backfill: %+v", sum)
	}
	want := map[string]string{}
	for _, d := range []string{"2026-01-01T02:00:00Z", "2026-01-02T02:00:00Z", "2026-01-03T02:00:00Z"} {
		want[d] = d + "|day of " + d
	}
	if got := f.runs("nightly"); !mapsEqual(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if sum.Runs[0].Time != "2026-01-01T02:00:00Z" || sum.Runs[2].Time != "2026-01-03T02:00:00Z" {
		t.Errorf("not oldest first: %+v", sum.Runs)
	}
	sum, err = b.Fill(context.Background(), "nightly", at("2026-01-01T00:00:00Z"), at("2026-01-04T00:00:00Z"))
	if err != nil || len(sum.Runs) != 0 || sum.HadRun != 3 {
		t.Errorf("second backfill: %+v, %v", sum, err)
	}
	if got := f.runs("nightly"); len(got) != 3 {
		t.Errorf("after the second backfill: %d runs, want 3", len(got))
	}
	if !strings.Contains(f.status.String(), "Backfill of schedule nightly: 0 run(s) started: 0 succeeded, 0 failed; 0 not run; 3 had a run already") {
		t.Errorf("summary:\n%s", f.status)
	}
}

// TestBackfillTooManyNeedsYes: more than MaxBackfill times without Yes is
// an error and runs nothing.
func TestBackfillTooManyNeedsYes(t *testing.T) {
	f := newFixture(t)
	f.schedule("minutely", "* * * * *", "", "", at("2026-02-01T00:00:00Z"), nil)
	b := &Backfill{Store: f.store, Run: f.run(), Status: f.status}
	_, err := b.Fill(context.Background(), "minutely", at("2026-01-01T00:00:00Z"), at("2026-01-08T00:00:00Z"))
	if err == nil || !strings.Contains(err.Error(), "more than 10000 times") || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("Fill of a week of minutes: %v", err)
	}
	if claims, _ := schedulestore.Claims(context.Background(), f.store, "minutely"); len(claims) != 0 {
		t.Errorf("%d claims after a refused backfill", len(claims))
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestRestartDoesNotDoubleFire: a scheduler that fired the missed times,
// and a new one started at the same moment, fire each time once; a new one an hour later fires
// that hour's time only.
func TestRestartDoesNotDoubleFire(t *testing.T) {
	f := newFixture(t)
	f.schedule("hourly", "0 * * * *", schedule.CatchUpAll, "", at("2026-01-01T00:00:00Z"), nil)
	clk := &clock{t: at("2026-01-01T03:00:05Z")}
	a := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: clk.Now}
	if _, err := a.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.Wait()
	b := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: clk.Now}
	if _, err := b.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if got := f.runs("hourly"); len(got) != 3 {
		t.Errorf("after a restart: runs %v, want 01:00, 02:00 and 03:00 once each", got)
	}
	clk.Set(at("2026-01-01T04:00:01Z"))
	next, err := b.Once(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b.Wait()
	got := f.runs("hourly")
	if len(got) != 4 || got["2026-01-01T04:00:00Z"] != "2026-01-01T04:00:00Z|none" || !next.Equal(at("2026-01-01T05:00:00Z")) {
		t.Errorf("an hour later: runs %v, next %v", got, next)
	}
	if claims, _ := schedulestore.Claims(context.Background(), f.store, "hourly"); len(claims) != 4 {
		t.Errorf("%d claims, want 4", len(claims))
	}
}

// TestCatchUpLatest: after a stop of three hours, catch-up latest runs the
// newest missed time only and says how many it left.
func TestCatchUpLatest(t *testing.T) {
	f := newFixture(t)
	f.schedule("hourly", "0 * * * *", schedule.CatchUpLatest, "", at("2026-01-01T00:00:00Z"), nil)
	sc := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: func() time.Time { return at("2026-01-01T03:30:00Z") }}
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc.Wait()
	if got := f.runs("hourly"); len(got) != 1 || got["2026-01-01T03:00:00Z"] == "" {
		t.Errorf("runs %v, want 03:00 only", got)
	}
	if !strings.Contains(f.status.String(), "Schedule hourly: 2 missed time(s) not run (catch-up latest") {
		t.Errorf("status:\n%s", f.status)
	}
}

// TestForbid: with concurrency Forbid a time that comes while the
// schedule's run still runs is skipped (and not run after a restart
// either); the next time after the run ended runs.
func TestForbid(t *testing.T) {
	f := newFixture(t)
	gate := filepath.Join(f.dir, "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.schedule("minutely", "* * * * *", "", schedule.ConcurrencyForbid, at("2026-01-01T00:00:00Z"), map[string]string{"gate": gate})
	clk := &clock{t: at("2026-01-01T00:01:01Z")}
	sc := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: clk.Now}
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Set(at("2026-01-01T00:02:01Z"))
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.Remove(gate)
	sc.Wait()
	clk.Set(at("2026-01-01T00:03:01Z"))
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc.Wait()
	got := f.runs("minutely")
	if len(got) != 2 || got["2026-01-01T00:01:00Z"] == "" || got["2026-01-01T00:03:00Z"] == "" {
		t.Errorf("runs %v, want 00:01 and 00:03 (00:02 skipped)", got)
	}
	if !strings.Contains(f.status.String(), "Schedule minutely: 2026-01-01T00:02:00Z skipped: a run of it is still running (concurrency Forbid)") {
		t.Errorf("status:\n%s", f.status)
	}
}

// TestCancelledSchedulerClaimsStay: a scheduler stopped right after it
// claimed its times (its runs cancelled, some before they started) leaves
// the claims: a new one fires none of those times again.
func TestCancelledSchedulerClaimsStay(t *testing.T) {
	f := newFixture(t)
	// The runs wait at the gate: none may end before the scheduler stops.
	gate := filepath.Join(f.dir, "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.schedule("hourly", "0 * * * *", schedule.CatchUpAll, "", at("2026-01-01T00:00:00Z"), map[string]string{"gate": gate})
	now := func() time.Time { return at("2026-01-01T03:00:05Z") }
	ctx, cancel := context.WithCancel(context.Background())
	a := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: now}
	if _, err := a.Once(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	a.Wait()
	os.Remove(gate)
	b := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: now}
	if _, err := b.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	claims, _ := schedulestore.Claims(context.Background(), f.store, "hourly")
	if len(claims) != 3 || strings.Count(f.status.String(), "ran already") != 0 {
		t.Errorf("%d claims, want 3\n%s", len(claims), f.status)
	}
	for _, said := range f.runs("hourly") {
		if said != "Cancelled" {
			t.Errorf("a run of the stopped scheduler: %s, want Cancelled", said)
		}
	}
}

// TestReplace: with concurrency Replace a due time cancels the schedule's
// running run and then starts its own.
func TestReplace(t *testing.T) {
	f := newFixture(t)
	gate := filepath.Join(f.dir, "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.schedule("minutely", "* * * * *", "", schedule.ConcurrencyReplace, at("2026-01-01T00:00:00Z"), map[string]string{"gate": gate})
	clk := &clock{t: at("2026-01-01T00:01:01Z")}
	sc := &Scheduler{Store: f.store, Run: f.run(), Status: f.status, Now: clk.Now}
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The first run runs (its step waits at the gate).
	for i := 0; i < 200 && f.runs("minutely")["2026-01-01T00:01:00Z"] != "Running"; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	clk.Set(at("2026-01-01T00:02:01Z"))
	if _, err := sc.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.Remove(gate)
	sc.Wait()
	got := f.runs("minutely")
	if got["2026-01-01T00:01:00Z"] != "Cancelled" || got["2026-01-01T00:02:00Z"] != "2026-01-01T00:02:00Z|none" {
		t.Errorf("runs %v, want 00:01 Cancelled and 00:02 done\n%s", got, f.status)
	}
}
