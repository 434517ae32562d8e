package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestExecCache: with --cache on, a step whose fingerprint matches one that
// succeeded earlier is not run: its outputs record names the earlier
// outputs (cachedFrom that run) and its output parameters are written for
// Argo; a downstream step reads the earlier run's artifact. Another image,
// other input data, --cache off or refresh, or a cached artifact that is
// gone make the step run.
func TestExecCache(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	comp := component(t,
		[]components.ProgramIO{{Name: "data", Type: "Dataset"}, {Name: "log", Type: "string"}},
		[]components.ProgramIO{{Name: "out", Type: "Artifact"}, {Name: "rows", Type: "int"}},
		`echo "$PIPECTL_RUN_ID" >> "$2"; cat "$1" > "$3"; echo x >> "$3"; wc -l < "$1" | tr -d ' ' > "$4"`,
		"{{inputs.data.path}}", "{{inputs.log}}", "{{outputs.out.path}}", "{{outputs.rows.path}}")
	step := stepSpec(t, plan.Wiring{
		Step:   "fit",
		Params: map[string]plan.Text{"log": {{Lit: ran}}},
		Inputs: map[string]plan.OutputRef{"data": {Step: "prep", Output: "train"}},
	})
	prep := func(run, data string) {
		t.Helper()
		src := filepath.Join(t.TempDir(), "train")
		writeFile(t, src, data)
		key := record.OutputKey(run, "prep", "train")
		meta, err := artifacts.Publish(ctx, store, key, src, artifacts.Metadata{Type: "Dataset"})
		if err != nil {
			t.Fatal(err)
		}
		out := record.OutputRecord{Name: "train", Type: "Dataset", URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}
		if err := recordstore.WriteOutputs(ctx, store, run, "prep", []record.OutputRecord{out}); err != nil {
			t.Fatal(err)
		}
	}
	params := map[string]string{}
	exec := func(run string, flags ...string) {
		t.Helper()
		params[run] = filepath.Join(t.TempDir(), "outputs")
		args := append([]string{"--run=" + run, "--component=" + comp, "--step=" + step, "--output-params=" + params[run]}, flags...)
		if _, stderr, err := runExec(t, root, nil, args...); err != nil {
			t.Fatalf("exec %s: %v\n%s", run, err, stderr)
		}
	}
	ranRuns := func() string {
		b, _ := os.ReadFile(ran)
		return strings.Join(strings.Fields(string(b)), " ")
	}
	record := func(run string) record.StepOutputs {
		t.Helper()
		rec, err := recordstore.ReadStepOutputs(ctx, store, run, "fit")
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}

	prep("r1", "a\nb\n")
	exec("r1", "--cache=on", "--image=x:1")
	prep("r2", "a\nb\n")
	exec("r2", "--cache=on", "--image=x:1")
	if got := ranRuns(); got != "r1" {
		t.Fatalf("the program ran in %q, want only r1", got)
	}
	r1, r2 := record("r1"), record("r2")
	if r2.CachedFrom != "r1" || r1.CachedFrom != "" {
		t.Errorf("cachedFrom r1 %q r2 %q, want \"\" and r1", r1.CachedFrom, r2.CachedFrom)
	}
	if diff := cmp.Diff(r1.Outputs, r2.Outputs); diff != "" {
		t.Errorf("r2's outputs are not r1's (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(params["r2"], "rows")); err != nil || string(b) != "2" {
		t.Errorf("r2's output parameter rows = %q, %v; want 2", b, err)
	}

	// A step downstream of the reused one reads r1's artifact.
	got := filepath.Join(t.TempDir(), "got")
	down := stepSpec(t, plan.Wiring{Step: "use", Inputs: map[string]plan.OutputRef{"in": {Step: "fit", Output: "out"}}})
	downComp := component(t, []components.ProgramIO{{Name: "in", Type: "Artifact"}}, nil, `cat "$1" > "$2"`, "{{inputs.in.path}}", got)
	if _, stderr, err := runExec(t, root, nil, "--run=r2", "--component="+downComp, "--step="+down); err != nil {
		t.Fatalf("downstream exec: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(got); string(b) != "a\nb\nx\n" {
		t.Errorf("downstream step read %q, want r1's output", b)
	}

	// Misses.
	prep("r3", "a\nb\n")
	exec("r3", "--cache=on", "--image=x:2") // another image
	prep("r4", "a\nc\n")
	exec("r4", "--cache=on", "--image=x:1") // other data
	prep("r5", "a\nb\n")
	exec("r5", "--cache=off", "--image=x:1")
	exec("r5", "--image=x:1") // off by default
	exec("r5", "--cache=refresh", "--image=x:1")
	if got, want := ranRuns(), "r1 r3 r4 r5 r5 r5"; got != want {
		t.Fatalf("the program ran in %q, want %q", got, want)
	}
	// refresh recorded r5's outputs; with them republished (another size),
	// the entry is not used.
	writeFile(t, filepath.Join(root, "r5", "fit", "out"), "changed")
	prep("r6", "a\nb\n")
	exec("r6", "--cache=on", "--image=x:1")
	if got := record("r6"); got.CachedFrom != "" {
		t.Errorf("r6 cachedFrom %q: an entry whose artifact changed was used", got.CachedFrom)
	}
	if got, want := ranRuns(), "r1 r3 r4 r5 r5 r5 r6"; got != want {
		t.Errorf("the program ran in %q, want %q", got, want)
	}
}
