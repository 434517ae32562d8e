package artifacts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// `artifacts ls` lists a distributed step's latest checkpoint below the
// outputs (generation, files, size, time; in -o json an entry of its own),
// and `artifacts lineage` of the step's output names it; the outputs and
// their sha256 are as without it.
func TestListShowsCheckpoint(t *testing.T) {
	ctx := t.Context()
	ios, _, out, _ := podutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, ArtifactsRoot: t.TempDir(), Getenv: func(string) string { return "" }}
	store, err := f.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	model := record.OutputRecord{Name: "model", Type: "Model", URI: store.URI("r1/train/model"), Size: 3, SHA256: "ba7816bf"}
	rec := &record.Run{ID: "r1", Pipeline: "p", Status: record.StatusSucceeded, Started: time.Unix(1, 0),
		Steps: []record.StepRecord{{Name: "train", Status: record.StatusSucceeded, Outputs: []record.OutputRecord{model}}, {Name: "evaluate", Status: record.StatusSucceeded}}}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	if err := recordstore.WriteInputs(ctx, store, record.StepInputs{Run: "r1", Step: "train"}); err != nil {
		t.Fatal(err)
	}
	k := &checkpoint.Keeper{Store: store, Run: "r1", Step: "train", Dir: t.TempDir(), Keep: 2}
	for _, epoch := range []string{"1", "2", "3"} {
		if err := os.WriteFile(filepath.Join(k.Dir, "epoch"), []byte(epoch+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(k.Dir, "model.pt"), []byte("weights"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}

	cmd := NewCmdList(f, nil)
	cmd.SetArgs([]string{"r1"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	ckptURI := store.URI("r1/train/.checkpoint/00000003/")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^train +model +Model +3 +ba7816bf +` + regexp.QuoteMeta(model.URI) + `$`),
		regexp.MustCompile(`(?m)^STEP +CHECKPOINT +FILES +SIZE +CREATED +URI$`),
		regexp.MustCompile(`(?m)^train +3 +2 +9 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ +` + regexp.QuoteMeta(ckptURI) + `$`),
	} {
		if !want.MatchString(table) {
			t.Errorf("artifacts ls lacks %s:\n%s", want, table)
		}
	}
	if strings.Contains(table, "evaluate") {
		t.Errorf("a step without a checkpoint is listed:\n%s", table)
	}

	out.Reset()
	cmd = NewCmdList(f, nil)
	cmd.SetArgs([]string{"r1", "-o", "json"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	var got []runview.Entry
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(got) != 2 || got[0].Output != "model" || got[0].Checkpoint != nil {
		t.Fatalf("artifacts ls -o json = %+v, want the model, then the checkpoint", got)
	}
	if c := got[1]; c.Step != "train" || c.Output != ".checkpoint" || c.Type != "Checkpoint" || c.URI != ckptURI || c.Size != 9 ||
		c.Checkpoint == nil || c.Checkpoint.Generation != 3 || c.Checkpoint.Files != 2 || time.Since(c.Checkpoint.Created) > time.Minute {
		t.Errorf("checkpoint entry %+v (%+v)", c, c.Checkpoint)
	}

	// The lineage `artifacts lineage r1/train/model` traces and writes.
	get := func(ctx context.Context, id string) (*record.Run, error) { return recordstore.ReadRun(ctx, store, id) }
	l, err := runview.TraceLineage(ctx, store, get, "r1", "train", "model")
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Checkpoint; c == nil || c.Generation != 3 || c.URI != ckptURI {
		t.Errorf("lineage's checkpoint %+v, want generation 3 at %s", c, ckptURI)
	}
	out.Reset()
	runview.WriteLineage(out, l)
	if want := "  checkpoint 3 (2 file(s), 9 bytes, "; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "not part of the fingerprint): "+ckptURI) {
		t.Errorf("lineage lacks the step's checkpoint %q:\n%s", want, out)
	}
}
