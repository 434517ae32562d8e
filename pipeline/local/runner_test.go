package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// shComponent is an inline component running a shell script with the
// given inputs and outputs; $1.. are the resolved args.
func shComponent(name, inputs, outputs, script string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: %s}
      inputs: [%s]
      outputs: [%s]
      command: [sh, -c, %s, %s]
      args: [%s]`, name, inputs, outputs, strconv.Quote(script), name, strings.Join(quoted, ", "))
}

type fixture struct {
	t      *testing.T
	dir    string
	store  *artifacts.Local
	logs   *componentstest.Buffer
	status *componentstest.Buffer
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, store: store, logs: &componentstest.Buffer{}, status: &componentstest.Buffer{}}
}

func (f *fixture) load(yaml string) *pipeline.Pipeline {
	f.t.Helper()
	path := filepath.Join(f.dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		f.t.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		f.t.Fatalf("Load: %v\n%s", err, yaml)
	}
	return p
}

func (f *fixture) run(ctx context.Context, p *pipeline.Pipeline, overrides map[string]string, mod func(*Runner)) (*record.Run, error) {
	f.t.Helper()
	params, err := p.ResolveParams(overrides)
	if err != nil {
		f.t.Fatal(err)
	}
	r := &Runner{Store: f.store, Logs: f.logs, Status: f.status, WorkDir: filepath.Join(f.dir, "work"), GracePeriod: time.Second}
	if mod != nil {
		mod(r)
	}
	return r.Run(ctx, p, params)
}

// madeArtifact runs a pipeline whose step makes a Dataset holding
// "rows: 3" and returns that artifact's URI in the store.
func (f *fixture) madeArtifact(ctx context.Context) string {
	f.t.Helper()
	p := f.load(header + `steps:
  - name: make
` + shComponent("make", "", "{name: data, type: Dataset}", `printf 'rows: 3' > "$1"`, "{{outputs.data.path}}") + `
`)
	run, err := f.run(ctx, p, nil, nil)
	if err != nil {
		f.t.Fatalf("Run: %v\n%s", err, f.status)
	}
	return run.Step("make").Outputs[0].URI
}

const header = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: test}
`

func stepStatus(run *record.Run) map[string]string {
	out := map[string]string{}
	for _, s := range run.Steps {
		out[s.Name] = s.Status
	}
	return out
}

func TestRunDataFlowAndMetadata(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `params:
  greeting: {type: string, default: "hello {{not-a-ref}}"}
steps:
  - name: make
` + shComponent("make", "{name: greeting, type: string}", "{name: data, type: Dataset}, {name: lines, type: int}, {name: dir, type: Artifact}",
		`printf '%s\n' "$1" > "$2"; echo 1 > "$3"; mkdir -p "$4/sub"; echo a > "$4/a.txt"; echo b > "$4/sub/b.txt"`,
		"{{inputs.greeting}}", "{{outputs.data.path}}", "{{outputs.lines.path}}", "{{outputs.dir.path}}") + `
    inputs: {greeting: "{{params.greeting}}"}
  - name: use
` + shComponent("use", "{name: data, type: Dataset}, {name: n, type: int}, {name: tree, type: Artifact}", "{name: out, type: Artifact}",
		`cat "$1" "$3/sub/b.txt" > "$4"; echo "n=$2"`,
		"{{inputs.data.path}}", "{{inputs.n}}", "{{inputs.tree.path}}", "{{outputs.out.path}}") + `
    inputs:
      data: "{{steps.make.outputs.data}}"
      n: "{{steps.make.outputs.lines}}"
      tree: "{{steps.make.outputs.dir}}"
`)
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
	}
	if run.Status != record.StatusSucceeded {
		t.Fatalf("status %s", run.Status)
	}
	if !strings.Contains(f.logs.String(), "[use] n=1\n") {
		t.Errorf("logs lack the prefixed line of step use:\n%s", f.logs)
	}
	ctx := context.Background()
	out, err := recordstore.Resolve(ctx, f.store, run.ID+"/use/out")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := artifacts.Copy(ctx, f.store, out.Key, &buf, out.Meta.SHA256); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "hello {{not-a-ref}}\nb\n" {
		t.Errorf("use/out = %q", got)
	}
	sum := sha256.Sum256(buf.Bytes())
	if out.Meta.SHA256 != hex.EncodeToString(sum[:]) || out.Meta.Size != int64(buf.Len()) || out.Meta.Producer.Step != "use" {
		t.Errorf("metadata %+v does not match the bytes", out.Meta)
	}
	dir, err := recordstore.Resolve(ctx, f.store, run.ID+"/make/dir")
	if err != nil {
		t.Fatal(err)
	}
	if dir.Meta.Kind != artifacts.KindDirectory || len(dir.Meta.Files) != 2 || dir.Meta.Files[1].Path != "sub/b.txt" {
		t.Errorf("directory metadata %+v", dir.Meta)
	}
	// The run record is in the store, with outputs and exit codes.
	rec, err := recordstore.ReadRun(ctx, f.store, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	mk := rec.Step("make")
	if mk.ExitCode == nil || *mk.ExitCode != 0 || len(mk.Outputs) != 3 || mk.Outputs[1].Value == nil || *mk.Outputs[1].Value != "1" {
		t.Errorf("make record %+v", mk)
	}
	if got := rec.Step("use").DependsOn; len(got) != 1 || got[0] != "make" || rec.Step("make").DependsOn != nil {
		t.Errorf("dependsOn of make %v, of use %v; want none and [make]", rec.Step("make").DependsOn, got)
	}
	if rec.Params["greeting"] != "hello {{not-a-ref}}" || rec.Finished == nil {
		t.Errorf("run record params %v finished %v", rec.Params, rec.Finished)
	}
}

// TestRunParallelBranches: two independent steps must run at once (each
// waits for the other's marker), and a failed step skips only its dependents.
func TestRunParallelAndFailure(t *testing.T) {
	f := newFixture(t)
	marker := filepath.Join(f.dir, "m")
	wait := func(me, other string) string {
		return fmt.Sprintf(`touch %s-%s; i=0; while [ ! -e %s-%s ]; do i=$((i+1)); [ $i -gt 200 ] && exit 9; sleep 0.05; done; echo "$1" > "$2"`, marker, me, marker, other)
	}
	p := f.load(header + `steps:
  - name: left
` + shComponent("left", "", "{name: x, type: Artifact}", wait("left", "right"), "left", "{{outputs.x.path}}") + `
  - name: right
` + shComponent("right", "", "{name: x, type: Artifact}", wait("right", "left"), "right", "{{outputs.x.path}}") + `
  - name: broken
    after: [left]
` + shComponent("broken", "", "", `for i in 1 2 3 4 5; do echo "line $i"; done; exit 4`) + `
  - name: after-broken
    after: [broken]
` + shComponent("after-broken", "", "", `echo never`) + `
  - name: after-right
    after: [right]
` + shComponent("after-right", "", "", `echo fine`) + `
`)
	run, err := f.run(context.Background(), p, nil, func(r *Runner) { r.Parallelism = 2 })
	var rerr *RunError
	if !errors.As(err, &rerr) || run.Status != record.StatusFailed {
		t.Fatalf("Run err = %v, want a RunError for a failed run", err)
	}
	want := map[string]string{"left": "Succeeded", "right": "Succeeded", "broken": "Failed", "after-broken": "Skipped", "after-right": "Succeeded"}
	if got := stepStatus(run); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v\n%s", got, want, f.logs)
	}
	if c := run.Step("broken").ExitCode; c == nil || *c != 4 {
		t.Errorf("broken exit code %v, want 4", c)
	}
	// A step without outputs records an empty list, as on Argo.
	if b, err := json.Marshal(run.Step("after-right")); err != nil || !strings.Contains(string(b), `"outputs":[]`) {
		t.Errorf("after-right's record %s (%v), want \"outputs\":[]", b, err)
	}
	for _, frag := range []string{"broken", "Failed (exit code 4)", "last lines of broken", "[broken] line 5", "after-broken", "upstream step broken failed"} {
		if !strings.Contains(rerr.Summary, frag) {
			t.Errorf("summary lacks %q:\n%s", frag, rerr.Summary)
		}
	}
}

func TestRunRetriesAndTimeout(t *testing.T) {
	f := newFixture(t)
	flag := filepath.Join(f.dir, "tried")
	p := f.load(header + `steps:
  - name: flaky
    retries: 2
` + shComponent("flaky", "", "", fmt.Sprintf(`if [ ! -e %s ]; then touch %s; echo first try fails; exit 1; fi; echo second try works`, flag, flag)) + `
  - name: slow
    timeout: 500ms
` + shComponent("slow", "", "", `echo started; sleep 30`) + `
`)
	run, err := f.run(context.Background(), p, nil, nil)
	if err == nil {
		t.Fatal("want the run to fail (slow times out)")
	}
	if s := run.Step("flaky"); s.Status != "Succeeded" || s.Attempts != 2 {
		t.Errorf("flaky: status %s attempts %d, want Succeeded after 2", s.Status, s.Attempts)
	}
	if s := run.Step("slow"); s.Status != "Failed" || !strings.Contains(s.Message, "timed out after 500ms") || *s.ExitCode != 124 {
		t.Errorf("slow: %s %q exit %v", s.Status, s.Message, *s.ExitCode)
	}
}

func TestRunCache(t *testing.T) {
	f := newFixture(t)
	// Outside the pipeline's folder: a file written there would change the
	// folder's digest, part of each inline component's fingerprint.
	counter := filepath.Join(t.TempDir(), "count")
	yaml := header + `params:
  n: {type: int, default: 1}
steps:
  - name: produce
` + shComponent("produce", "{name: n, type: int}", "{name: out, type: Dataset}", fmt.Sprintf(`echo x >> %s; echo "n=$1" > "$2"`, counter), "{{inputs.n}}", "{{outputs.out.path}}") + `
    inputs: {n: "{{params.n}}"}
  - name: never-cached
    cache: false
` + shComponent("never-cached", "{name: d, type: Dataset}", "", fmt.Sprintf(`echo y >> %s.nc; cat "$1"`, counter), "{{inputs.d.path}}") + `
    inputs: {d: "{{steps.produce.outputs.out}}"}
`
	p := f.load(yaml)
	runs := func() int { b, _ := os.ReadFile(counter); return strings.Count(string(b), "x") }
	first, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := second.Step("produce")
	if !s.Cached || s.CachedFrom != first.ID || runs() != 1 {
		t.Errorf("second run: cached=%v from %q, producer ran %d times; want a cache hit on %s", s.Cached, s.CachedFrom, runs(), first.ID)
	}
	if second.Step("never-cached").Cached {
		t.Error("a step with cache: false was cached")
	}
	if !strings.Contains(f.status.String(), "cached: reusing the outputs of step produce of run "+first.ID) {
		t.Errorf("status does not say the step was cached:\n%s", f.status)
	}
	// A cached output is still readable through the new run.
	if _, err := recordstore.Resolve(context.Background(), f.store, second.ID+"/produce/out"); err != nil {
		t.Errorf("resolve cached output: %v", err)
	}
	if _, err := f.run(context.Background(), p, map[string]string{"n": "2"}, nil); err != nil || runs() != 2 {
		t.Errorf("a changed param must miss the cache: err %v, runs %d", err, runs())
	}
	third, err := f.run(context.Background(), p, nil, func(r *Runner) { r.NoCache = true })
	if err != nil || third.Step("produce").Cached || runs() != 3 {
		t.Errorf("--no-cache: err %v cached %v runs %d", err, third.Step("produce").Cached, runs())
	}
	if b, _ := os.ReadFile(counter + ".nc"); strings.Count(string(b), "y") != 4 {
		t.Errorf("the cache: false step ran %d times, want 4", strings.Count(string(b), "y"))
	}
}

func TestRunCancelStopsEverything(t *testing.T) {
	f := newFixture(t)
	pids := filepath.Join(f.dir, "pids")
	p := f.load(header + `steps:
  - name: busy
` + shComponent("busy", "", "", fmt.Sprintf(`sleep 300 & echo $! >> %s; echo $$ >> %s; wait`, pids, pids)) + `
  - name: gang
    distributed: {nodes: 2, procsPerNode: 1}
` + shComponent("gang", "", "", fmt.Sprintf(`sleep 300 & echo $! >> %s; echo $$ >> %s; wait`, pids, pids)) + `
  - name: later
    after: [busy]
` + shComponent("later", "", "", `echo never`) + `
`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			b, _ := os.ReadFile(pids)
			if strings.Count(string(b), "\n") >= 6 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	run, err := f.run(ctx, p, nil, nil)
	var rerr *RunError
	if !errors.As(err, &rerr) || run.Status != record.StatusCancelled {
		t.Fatalf("err %v status %s, want Cancelled", err, run.Status)
	}
	want := map[string]string{"busy": "Cancelled", "gang": "Cancelled", "later": "Cancelled"}
	if got := stepStatus(run); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	rec, err := recordstore.ReadRun(context.Background(), f.store, run.ID)
	if err != nil || rec.Status != record.StatusCancelled {
		t.Errorf("stored record: %v %v", rec, err)
	}
	b, _ := os.ReadFile(pids)
	for _, line := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(line)
		if processRunning(pid) {
			t.Errorf("process %d survived the cancellation", pid)
		}
	}
}

func TestRunWhenAndMissingOutput(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `params:
  go: {type: bool, default: false}
steps:
  - name: maybe
    when: "{{params.go}} == true"
` + shComponent("maybe", "", "", `echo ran`) + `
  - name: lazy
` + shComponent("lazy", "", "{name: model, type: Model}", `echo forgot to write`) + `
`)
	run, _ := f.run(context.Background(), p, nil, nil)
	if s := run.Step("maybe"); s.Status != "Skipped" {
		t.Errorf("maybe: %s, want Skipped", s.Status)
	}
	if s := run.Step("lazy"); s.Status != "Failed" || !strings.Contains(s.Message, "never wrote its declared output(s) model") {
		t.Errorf("lazy: %s %q", s.Status, s.Message)
	}
	run, _ = f.run(context.Background(), p, map[string]string{"go": "true"}, nil)
	if s := run.Step("maybe"); s.Status != "Succeeded" {
		t.Errorf("maybe with go=true: %s", s.Status)
	}
}

// TestRunGangOnlyRankZeroPublishes: every rank writes its own rank into the
// output; only rank 0's file is published.
func TestRunGangOnlyRankZeroPublishes(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `steps:
  - name: train
    distributed: {nodes: 2, procsPerNode: 2}
` + shComponent("train", "", "{name: model, type: Model}", `echo "rank $RANK of $WORLD_SIZE"; echo "$RANK" > "$1"`, "{{outputs.model.path}}") + `
`)
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, f.logs)
	}
	for r := 0; r < 4; r++ {
		if !strings.Contains(f.logs.String(), fmt.Sprintf("[train rank %d] rank %d of 4\n", r, r)) {
			t.Errorf("no prefixed line from rank %d:\n%s", r, f.logs)
		}
	}
	var buf bytes.Buffer
	ref, err := recordstore.Resolve(context.Background(), f.store, run.ID+"/train/model")
	if err != nil {
		t.Fatal(err)
	}
	if err := artifacts.Copy(context.Background(), f.store, ref.Key, &buf, ref.Meta.SHA256); err != nil || buf.String() != "0\n" {
		t.Errorf("published model %q (%v), want rank 0's", buf.String(), err)
	}
}

// A running step's log reaches the store while the step runs, so readers
// can follow it; the final log has every line.
func TestRunLogGrowsWhileRunning(t *testing.T) {
	f := newFixture(t)
	gate := filepath.Join(f.dir, "gate")
	p := f.load(header + `steps:
  - name: wait
` + shComponent("wait", "", "", `echo started; while [ ! -e "$1" ]; do sleep 0.05; done; echo finished`, gate) + `
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.run(ctx, p, nil, func(r *Runner) { r.RunID = "live-log" })
		done <- err
	}()
	key := record.LogKey("live-log", "wait")
	for {
		var buf bytes.Buffer
		if err := artifacts.Copy(ctx, f.store, key, &buf, ""); err == nil && strings.Contains(buf.String(), "[wait] started\n") {
			if strings.Contains(buf.String(), "finished") {
				t.Fatalf("the log says finished before the gate opened:\n%s", buf.String())
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the running step's log never reached the store")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	var buf bytes.Buffer
	if err := artifacts.Copy(ctx, f.store, key, &buf, ""); err != nil || buf.String() != "[wait] started\n[wait] finished\n" {
		t.Errorf("final log %q, %v", buf.String(), err)
	}
}

// TestRunStepOutputInsideText: a step output inside a longer text of a
// step input is its value there, as written, next to a param.
func TestRunStepOutputInsideText(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `params:
  who: {type: string, default: you}
steps:
  - name: count
` + shComponent("count", "", "{name: n, type: int}", `printf ' 007' > "$1"`, "{{outputs.n.path}}") + `
  - name: say
    inputs: {msg: "{{params.who}}: n={{steps.count.outputs.n}}, again {{steps.count.outputs.n}}!"}
` + shComponent("say", "{name: msg, type: string}", "{name: said, type: string}", `printf '%s' "$1" > "$2"`, "{{inputs.msg}}", "{{outputs.said.path}}") + `
`)
	if got := p.Step("say").Deps(); len(got) != 1 || got[0] != "count" {
		t.Errorf("say depends on %v, want [count]", got)
	}
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	out := run.Step("say").Outputs
	if len(out) != 1 || out[0].Value == nil || *out[0].Value != "you: n= 007, again  007!" {
		t.Errorf("say said %+v, want %q", out, "you: n= 007, again  007!")
	}
}

// TestRunArtifactParam: a pipeline with an artifact param runs by itself
// when the run gives the URI of an artifact in the store (an output of an
// earlier run): its step reads the artifact, a second run reuses the step
// (the artifact's sha256 is in the fingerprint), and a URI outside the
// store fails the step.
func TestRunArtifactParam(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	uri := f.madeArtifact(ctx)
	second := f.load(header + `params:
  data: {type: Dataset}
steps:
  - name: read
    inputs: {data: "{{params.data}}"}
` + shComponent("read", "{name: data, type: Dataset}", "{name: text, type: string}", `cat "$1" > "$2"`, "{{inputs.data.path}}", "{{outputs.text.path}}") + `
`)
	for i, wantCached := range []bool{false, true} {
		run, err := f.run(ctx, second, map[string]string{"data": uri}, nil)
		if err != nil {
			t.Fatalf("Run %d: %v\n%s", i, err, f.status)
		}
		s := run.Step("read")
		if len(s.Outputs) != 1 || s.Outputs[0].Value == nil || *s.Outputs[0].Value != "rows: 3" || s.Cached != wantCached {
			t.Errorf("run %d: read gave %+v, cached %v; want %q, cached %v", i, s.Outputs, s.Cached, "rows: 3", wantCached)
		}
	}
	run, err := f.run(ctx, second, map[string]string{"data": "file:///elsewhere/data"}, nil)
	if s := run.Step("read"); err == nil || s.Status != "Failed" || !strings.Contains(s.Message, "is not in the artifact store") {
		t.Errorf("a URI outside the store: %v; read %s %q", err, s.Status, s.Message)
	}
	if _, err := second.ResolveParams(nil); err == nil || !strings.Contains(err.Error(), "give it with -p data=URI") {
		t.Errorf("ResolveParams without the artifact: %v", err)
	}
	// A default URI is the artifact when the run gives none.
	third := f.load(header + `params:
  data: {type: Dataset, default: "` + uri + `"}
steps:
  - name: read
    inputs: {data: "{{params.data}}"}
` + shComponent("read", "{name: data, type: Dataset}", "{name: text, type: string}", `cat "$1" > "$2"`, "{{inputs.data.path}}", "{{outputs.text.path}}") + `
`)
	run, err = f.run(ctx, third, nil, nil)
	if s := run.Step("read"); err != nil || len(s.Outputs) != 1 || s.Outputs[0].Value == nil || *s.Outputs[0].Value != "rows: 3" {
		t.Errorf("the default URI: %v; read gave %+v; want %q", err, s.Outputs, "rows: 3")
	}
}

// TestRunArtifactParamMetadata: an artifact param's metadata reaches the
// program reading it in its executor input, numbers as written and
// {{params.NAME}} in its strings (keys too) replaced by the value; a run
// with another value of that param does not reuse the step.
func TestRunArtifactParamMetadata(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	uri := f.madeArtifact(ctx)
	second := f.load(header + `params:
  name: {type: string, default: "a \"b\""}
  n: {type: int, default: "007"}
  data:
    type: Dataset
    metadata:
      key: value
      ratio: 1.50
      names: ["{{params.name}}", alias, 2]
      "{{params.name}}": "n={{params.n}}"
      nested: {ok: true, none: null}
steps:
  - name: read
    inputs: {data: "{{params.data}}"}
` + shComponent("read", "{name: data, type: Dataset}", "{name: text, type: string}", `printf '%s' "$1" > "$2"`, "{{executor.input}}", "{{outputs.text.path}}") + `
`)
	meta := func(run *record.Run) string { return readMetadata(t, run) }
	run, err := f.run(ctx, second, map[string]string{"data": uri}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	const want = `{"a \"b\"":"n=007","key":"value","names":["a \"b\"","alias",2],"nested":{"none":null,"ok":true},"ratio":1.50}`
	if got := meta(run); got != want {
		t.Errorf("metadata in the executor input:\n got %s\nwant %s", got, want)
	}
	run, err = f.run(ctx, second, map[string]string{"data": uri, "name": "x"}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	if got, want := meta(run), `{"key":"value","names":["x","alias",2],"nested":{"none":null,"ok":true},"ratio":1.50,"x":"n=007"}`; got != want || run.Step("read").Cached {
		t.Errorf("name=x: metadata %s (cached %v), want %s, not cached", got, run.Step("read").Cached, want)
	}
}

// TestRunArtifactParamMetadataFromStep: an artifact param's metadata
// embedding a step's output (a key and a value) gives the program reading
// the param that output's value as written; the reader waits for that
// step (its record's dependsOn), and a run where the output differs (the
// reader's inputs the same) does not reuse the reader, one where it is the
// same does.
func TestRunArtifactParamMetadataFromStep(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	uri := f.madeArtifact(ctx)
	p := f.load(header + `params:
  who: {type: string, default: "a \"b\" $(c)"}
  data:
    type: Dataset
    metadata: {by: "made by {{steps.namer.outputs.who}}!", "{{steps.namer.outputs.who}}": 1.0}
steps:
  - name: read
    inputs: {data: "{{params.data}}"}
` + shComponent("read", "{name: data, type: Dataset}", "{name: text, type: string}", `printf '%s' "$1" > "$2"`, "{{executor.input}}", "{{outputs.text.path}}") + `
  - name: namer
    inputs: {who: "{{params.who}}"}
` + shComponent("namer", "{name: who, type: string}", "{name: who, type: string}", `printf '%s' "$1" > "$2"`, "{{inputs.who}}", "{{outputs.who.path}}") + `
`)
	meta := func(run *record.Run) string { return readMetadata(t, run) }
	run, err := f.run(ctx, p, map[string]string{"data": uri}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	if got, want := meta(run), `{"a \"b\" $(c)":1.0,"by":"made by a \"b\" $(c)!"}`; got != want {
		t.Errorf("metadata in the executor input:\n got %s\nwant %s", got, want)
	}
	if got := run.Step("read").DependsOn; !slices.Equal(got, []string{"namer"}) {
		t.Errorf("read depends on %v, want [namer]", got)
	}
	run, err = f.run(ctx, p, map[string]string{"data": uri}, nil)
	if err != nil || !run.Step("read").Cached || !run.Step("namer").Cached {
		t.Errorf("the same run again: %v; read cached %v, namer cached %v, want both", err, run.Step("read").Cached, run.Step("namer").Cached)
	}
	run, err = f.run(ctx, p, map[string]string{"data": uri, "who": "x"}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	if got, want := meta(run), `{"by":"made by x!","x":1.0}`; got != want || run.Step("read").Cached {
		t.Errorf("who=x: metadata %s (cached %v), want %s, not cached", got, run.Step("read").Cached, want)
	}
}

// TestRunFinallyPipeline: a finally step whose component is a pipeline
// runs that pipeline's steps as finally steps, in their order, once the
// other steps ended, with the run's status.
func TestRunFinallyPipeline(t *testing.T) {
	ctx := context.Background()
	p, err := pipeline.Load("../testdata/finally-nested/main.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fail        string
		read, check string
		wantErr     bool
	}{
		{fail: "false", read: "Succeeded", check: "Skipped"},
		{fail: "true", read: "Failed", check: "run Failed", wantErr: true},
	} {
		f := newFixture(t)
		run, err := f.run(ctx, p, map[string]string{"fail": tc.fail}, nil)
		if (err != nil) != tc.wantErr {
			t.Fatalf("fail=%s: Run: %v\n%s", tc.fail, err, f.status)
		}
		read, check := run.Step("notify.read"), run.Step("notify.check")
		if read == nil || check == nil {
			t.Fatalf("fail=%s: steps %v", tc.fail, stepStatus(run))
		}
		if len(read.Outputs) != 1 || read.Outputs[0].Value == nil || *read.Outputs[0].Value != tc.read {
			t.Errorf("fail=%s: notify.read gave %+v, want %q", tc.fail, read.Outputs, tc.read)
		}
		got := check.Status
		if check.Status == "Succeeded" && len(check.Outputs) == 1 && check.Outputs[0].Value != nil {
			got = *check.Outputs[0].Value
		}
		if got != tc.check {
			t.Errorf("fail=%s: notify.check %s, want %s", tc.fail, got, tc.check)
		}
	}
}

// TestRunRunID: any step's input may hold {{run.id}}, the run's id.
func TestRunRunID(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `steps:
  - name: say
    inputs: {msg: "run {{run.id}}!"}
` + shComponent("say", "{name: msg, type: string}", "{name: said, type: string}", `printf '%s' "$1" > "$2"`, "{{inputs.msg}}", "{{outputs.said.path}}") + `
`)
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	if out := run.Step("say").Outputs; len(out) != 1 || out[0].Value == nil || *out[0].Value != "run "+run.ID+"!" {
		t.Errorf("say said %+v, want %q", out, "run "+run.ID+"!")
	}
}

// TestRunSecrets: a step's secret comes from the variable of that name in
// pipectl's environment, and reaches only the steps that name it; a run
// whose secret is not set fails before any step runs, naming the variable
// and the step, not any value (an optional one unset is no error); no
// record holds the value.
func TestRunSecrets(t *testing.T) {
	f := newFixture(t)
	pipe := header + `steps:
  - name: with
    secrets: [{env: CASE_SECRET_TOKEN, secret: tokens, key: token}, {env: CASE_SECRET_NONE, secret: tokens, key: none, optional: true}]
` + shComponent("with", "", "{name: seen, type: string}", `printf '%s' "${CASE_SECRET_TOKEN-unset}" | wc -c | tr -d ' ' > "$1"`, "{{outputs.seen.path}}") + `
  - name: without
` + shComponent("without", "", "{name: seen, type: string}", `printf '%s' "${CASE_SECRET_TOKEN-unset}" > "$1"`, "{{outputs.seen.path}}") + `
`
	p := f.load(pipe)
	t.Setenv("CASE_SECRET_TOKEN", "")
	os.Unsetenv("CASE_SECRET_TOKEN")
	if _, err := f.run(context.Background(), p, nil, nil); err == nil || !strings.Contains(err.Error(), "secrets not set: CASE_SECRET_TOKEN (step with; Secret tokens, key token, on a cluster)") {
		t.Fatalf("Run without the variable: %v, want a secrets-not-set error", err)
	}
	const value = "s3cr3t value"
	t.Setenv("CASE_SECRET_TOKEN", value)
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	for step, want := range map[string]string{"with": fmt.Sprint(len(value)), "without": "unset"} {
		out := run.Step(step).Outputs
		if len(out) != 1 || out[0].Value == nil || *out[0].Value != want {
			t.Errorf("step %s saw %+v, want %q", step, out, want)
		}
	}
	err = filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), value) {
			t.Errorf("%s holds the secret's value", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunRuntimeResources: resources given at run time (a param, a step's
// output) are checked when the step starts, as in a pod: a value
// Kubernetes would not take fails the step before its program runs,
// naming the field, the value and where it came from; a good one runs it
// (locally resources size nothing).
func TestRunRuntimeResources(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `params:
  cpu: {type: string, default: 500m}
  mem: {type: string, default: 1Gi}
steps:
  - name: sizer
    inputs: {mem: "{{params.mem}}"}
` + shComponent("sizer", "{name: mem, type: string}", "{name: mem, type: string}", `printf '%s' "$1" > "$2"`, "{{inputs.mem}}", "{{outputs.mem.path}}") + `
  - name: use
    resources: {cpu: "{{params.cpu}}", memory: "{{steps.sizer.outputs.mem}}"}
` + shComponent("use", "", "{name: ran, type: string}", `printf yes > "$1"`, "{{outputs.ran.path}}") + `
`)
	if got := p.Step("use").Deps(); !slices.Contains(got, "sizer") {
		t.Errorf("use depends on %v, want sizer (its output gives the memory)", got)
	}
	run, err := f.run(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, f.status)
	}
	if out := run.Step("use").Outputs; len(out) != 1 || out[0].Value == nil || *out[0].Value != "yes" {
		t.Errorf("use: %+v, want it ran", out)
	}
	for name, tc := range map[string]struct {
		params map[string]string
		want   string
	}{
		"output": {map[string]string{"mem": "1 Gi"}, `resources.memory: "1 Gi" is not a quantity (such as 500m, 2, 1.5, 4Gi or 15G: digits, then an optional exponent e3, binary suffix Ki, Mi, Gi, Ti, Pi, Ei or decimal suffix n, u, m, k, M, G, T, P, E), given by output mem of step sizer`},
		"param":  {map[string]string{"cpu": "-1"}, `resources.cpu: "-1" is not a quantity`},
	} {
		t.Run(name, func(t *testing.T) {
			run, err := f.run(context.Background(), p, tc.params, nil)
			if err == nil {
				t.Fatalf("Run succeeded, want use to fail")
			}
			s := run.Step("use")
			if s.Status != record.StatusFailed || !strings.Contains(s.Message, tc.want) || len(s.Outputs) != 0 {
				t.Errorf("use: %s %q %+v, want failed with %q and no outputs", s.Status, s.Message, s.Outputs, tc.want)
			}
		})
	}
}

// readMetadata is the metadata of input artifact data in the executor
// input step read of run printed as its output text.
func readMetadata(t *testing.T, run *record.Run) string {
	t.Helper()
	s := run.Step("read")
	if len(s.Outputs) != 1 || s.Outputs[0].Value == nil {
		t.Fatalf("read gave %+v", s.Outputs)
	}
	var in struct {
		Inputs struct {
			Artifacts map[string]struct {
				Artifacts []struct {
					Metadata json.RawMessage `json:"metadata"`
				} `json:"artifacts"`
			} `json:"artifacts"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(*s.Outputs[0].Value), &in); err != nil {
		t.Fatalf("executor input %q: %v", *s.Outputs[0].Value, err)
	}
	return string(in.Inputs.Artifacts["data"].Artifacts[0].Metadata)
}
