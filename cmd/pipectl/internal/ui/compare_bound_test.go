package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// countingStore counts the bytes read from a store.
type countingStore struct {
	artifacts.Store
	n *atomic.Int64
}

func (c countingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := c.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return countingReader{r, c.n}, nil
}

type countingReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestCompareBounded: comparing runs whose loops publish many large
// Metrics outputs reads at most compareBytes of them in all and says how
// many it left out (a 20-iteration loop of 1 MiB metrics per run made one
// comparison read every byte: 940 MB of memory for a few runs).
func TestCompareBounded(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	var big strings.Builder
	big.WriteString("{")
	for i := 0; big.Len() < 1<<20-64; i++ {
		fmt.Fprintf(&big, "\"m%06d\": %d, ", i, i)
	}
	big.WriteString("\"loss\": 0.5}")
	mustWrite(t, filepath.Join(src, "metrics.json"), big.String())
	const runs, iterations = 2, 10
	var ids []string
	for r := range runs {
		id := fmt.Sprintf("r%d", r)
		ids = append(ids, id)
		rec := &record.Run{ID: id, Pipeline: "p", Status: record.StatusSucceeded, Started: time.Unix(100, 0).UTC()}
		for i := range iterations {
			name := fmt.Sprintf("train[%d]", i)
			key := record.OutputKey(id, name, "metrics")
			meta, err := artifacts.Publish(ctx, store, key, filepath.Join(src, "metrics.json"), artifacts.Metadata{Type: "Metrics"})
			if err != nil {
				t.Fatal(err)
			}
			rec.Steps = append(rec.Steps, record.StepRecord{Name: name, Status: record.StatusSucceeded,
				Outputs: []record.OutputRecord{{Name: "metrics", Type: "Metrics", URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}}})
		}
		if err := recordstore.WriteRun(ctx, store, rec); err != nil {
			t.Fatal(err)
		}
	}
	var n atomic.Int64
	h, err := New(Options{Store: countingStore{store, &n}, Records: storeRecords{store}})
	if err != nil {
		t.Fatal(err)
	}
	w := get(h, "/api/compare?runs="+strings.Join(ids, ","))
	if w.Code != 200 {
		t.Fatalf("compare: %d %s", w.Code, w.Body)
	}
	var c Comparison
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if read := n.Load(); read > runview.DefaultCompareLimits.Bytes+1<<20 {
		t.Errorf("compare read %d bytes of the store, want at most about %d", read, runview.DefaultCompareLimits.Bytes)
	}
	if c.Omitted == 0 {
		t.Errorf("compare left out nothing, want some of the %d Metrics outputs omitted", runs*iterations)
	}
	if len(c.Metrics) > runview.DefaultCompareLimits.Metrics {
		t.Errorf("compare holds %d metrics, want at most %d", len(c.Metrics), runview.DefaultCompareLimits.Metrics)
	}
}
