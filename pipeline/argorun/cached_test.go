package argorun

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/local"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// writeLog is a store that remembers, in order, each object written:
// its key and, for a run record, the status it said.
type writeLog struct {
	artifacts.Store
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) note(key string, b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.HasSuffix(key, "/run.json") {
		var r record.Run
		_ = json.Unmarshal(b, &r)
		key += " " + r.Status
	}
	w.writes = append(w.writes, key)
}

func (w *writeLog) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	w.note(key, b)
	return w.Store.Put(ctx, key, strings.NewReader(string(b)), int64(len(b)))
}

func (w *writeLog) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	w.note(key, b)
	return w.Store.Create(ctx, key, strings.NewReader(string(b)), int64(len(b)))
}

// cachedStore runs testdata/two-steps.yaml locally into a new store, so that each of its
// steps has a cache entry a cluster run can use before it starts.
func cachedStore(t *testing.T) (artifacts.Store, *pipeline.Pipeline, map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	twoSteps, err := os.ReadFile(filepath.Join("testdata", "two-steps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, twoSteps, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.ResolveParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := (&local.Runner{Store: store, Logs: io.Discard, Status: io.Discard}).Run(context.Background(), p, params)
	if err != nil {
		t.Fatalf("first run: %v", err)
	}
	return store, p, params, first.ID
}

// TestCachedRunRecordsSucceededLast: a cluster run whose steps are all
// cached says Succeeded only after every step's outputs record is written,
// so no reader sees a finished run without its outputs; when one cannot be
// written the run is recorded Failed, naming the step.
func TestCachedRunRecordsSucceededLast(t *testing.T) {
	ctx := context.Background()
	store, p, params, first := cachedStore(t)
	w := &writeLog{Store: store}
	rec, err := CachedRun(ctx, w, p, params, "pipeline.yaml", "ml", nil, nil)
	if err != nil || rec == nil {
		t.Fatalf("cachedRun = %v, %v; want every step cached", rec, err)
	}
	want := []string{
		rec.ID + "/run.json Running",
		rec.ID + "/pipeline.json", // the resolved pipeline, kept with the run
		rec.ID + "/make/outputs.json",
		rec.ID + "/count/outputs.json",
		rec.ID + "/run.json Succeeded",
	}
	if strings.Join(w.writes, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes, in order:\n%s\nwant:\n%s", strings.Join(w.writes, "\n"), strings.Join(want, "\n"))
	}
	got, err := recordstore.ReadRun(ctx, store, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Steps {
		if s.Status != record.StatusSucceeded || !s.Cached || s.CachedFrom != first || s.Finished == nil {
			t.Errorf("step %s: %+v, want succeeded, reused from %s", s.Name, s, first)
		}
	}

	w = &writeLog{Store: store}
	rec, err = CachedRun(ctx, &failOutputs{writeLog: w, step: "count"}, p, params, "pipeline.yaml", "ml", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "step count") || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("cachedRun with count's outputs record failing = %v, %v; want an error naming step count", rec, err)
	}
	id, _, _ := strings.Cut(w.writes[0], "/")
	failed, err := recordstore.ReadRun(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	if failed == nil || failed.Status != record.StatusFailed || !strings.Contains(failed.Message, "disk full") || failed.Finished == nil {
		t.Errorf("the run whose reuse failed: %+v, want Failed with the reason", failed)
	}
	if s := failed.Step("count"); s == nil || s.Status == record.StatusSucceeded {
		t.Errorf("count's record: %+v, want not succeeded", s)
	}
}

// failOutputs fails the outputs record of one step.
type failOutputs struct {
	*writeLog
	step string
}

func (f *failOutputs) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.HasSuffix(key, "/"+f.step+"/outputs.json") {
		return errors.New("disk full")
	}
	return f.writeLog.Put(ctx, key, r, size)
}

// TestCachedRunPinnedImage: the fingerprints CachedRun looks up hold the
// pinned image the pods would run, not the tag: outputs made under the tag
// are not reused for a digest.
func TestCachedRunPinnedImage(t *testing.T) {
	ctx := context.Background()
	store, p, params, _ := cachedStore(t)
	pinned := map[string]string{"busybox": "reg.test/busybox@sha256:" + strings.Repeat("3", 64)}
	if rec, err := CachedRun(ctx, store, p, params, "pipeline.yaml", "ml", nil, pinned); err != nil || rec != nil {
		t.Errorf("CachedRun with busybox pinned = %+v, %v; want nil: nothing ran in that image", rec, err)
	}
	if rec, err := CachedRun(ctx, store, p, params, "pipeline.yaml", "ml", nil, map[string]string{"other:1": "reg.test/other@sha256:" + strings.Repeat("4", 64)}); err != nil || rec == nil {
		t.Errorf("CachedRun with another image pinned = %v, %v; want every step cached", rec, err)
	}
}
