package runview

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

func str(s string) *string { return &s }

// TestCompareRuns: every group lines the runs up by name, a run without a
// value has null, and Differs marks the rows whose values are not all the same.
func TestCompareRuns(t *testing.T) {
	a := &record.Run{ID: "a", Params: map[string]string{"lr": "0.1", "epochs": "3"},
		Origin: &record.Origin{Pipectl: "v1", Git: &record.GitOrigin{Commit: "c1", Branch: "main"}},
		Steps: []record.StepRecord{
			{Name: "prep", Status: record.StatusSucceeded, Code: "sha256:1", Fingerprint: "f1"},
			{Name: "train", Status: record.StatusFailed, Code: "sha256:2", Image: "img@sha256:9", Fingerprint: "f2"},
		}}
	b := &record.Run{ID: "b", Params: map[string]string{"lr": "0.2", "epochs": "3"},
		Origin: &record.Origin{Pipectl: "v1", Git: &record.GitOrigin{Commit: "c1", Branch: "main", Dirty: true, DiffSHA256: "d"}},
		Steps: []record.StepRecord{
			{Name: "prep", Status: record.StatusSucceeded, Cached: true, Code: "sha256:1", Fingerprint: "f1"},
			{Name: "train", Status: record.StatusSucceeded, Code: "sha256:3", Image: "img@sha256:9", Fingerprint: "f3"},
			{Name: "eval", Status: record.StatusSucceeded, Code: "sha256:4"},
		}}
	c := compareRuns([]*record.Run{a, b}, []map[[2]string]string{{{"train/m", "acc"}: "0.8"}, {{"train/m", "acc"}: "0.9", {"eval/m", "auc"}: "0.7"}})
	want := &Comparison{
		Runs:   []Summary{Summarize(a), Summarize(b)},
		Params: []Row{{Name: "epochs", Values: []*string{str("3"), str("3")}}, {Name: "lr", Values: []*string{str("0.1"), str("0.2")}, Differs: true}},
		Steps: []Row{
			{Name: "prep", Values: []*string{str("Succeeded"), str("Succeeded (cached)")}, Differs: true},
			{Name: "train", Values: []*string{str("Failed"), str("Succeeded")}, Differs: true},
			{Name: "eval", Values: []*string{nil, str("Succeeded")}, Differs: true},
		},
		Code: []Row{
			{Name: "prep", Values: []*string{str("sha256:1"), str("sha256:1")}},
			{Name: "train", Values: []*string{str("sha256:2"), str("sha256:3")}, Differs: true},
			{Name: "eval", Values: []*string{nil, str("sha256:4")}, Differs: true},
		},
		Images: []Row{
			{Name: "prep", Values: []*string{nil, nil}},
			{Name: "train", Values: []*string{str("img@sha256:9"), str("img@sha256:9")}},
			{Name: "eval", Values: []*string{nil, nil}},
		},
		Fingerprints: []Row{
			{Name: "prep", Values: []*string{str("f1"), str("f1")}},
			{Name: "train", Values: []*string{str("f2"), str("f3")}, Differs: true},
			{Name: "eval", Values: []*string{nil, nil}},
		},
		Origin: []Row{
			{Name: "pipectl", Values: []*string{str("v1"), str("v1")}},
			{Name: "commit", Values: []*string{str("c1"), str("c1")}},
			{Name: "branch", Values: []*string{str("main"), str("main")}},
			{Name: "dirty", Values: []*string{str("no"), str("yes")}, Differs: true},
			{Name: "diff", Values: []*string{nil, str("d")}, Differs: true},
		},
		Metrics: []Row{
			{Source: "eval/m", Name: "auc", Values: []*string{nil, str("0.7")}, Differs: true},
			{Source: "train/m", Name: "acc", Values: []*string{str("0.8"), str("0.9")}, Differs: true},
		},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("compareRuns (-want +got):\n%s", diff)
	}
}

// TestCompareReadsMetrics: Compare reads each run's Metrics outputs from the
// store, and leaves out what is past its limits, counting it.
func TestCompareReadsMetrics(t *testing.T) {
	ctx := t.Context()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var recs []*record.Run
	for i, body := range []string{`{"acc": 0.5}`, `{"acc": 0.75, "loss": 1}`} {
		id := []string{"r1", "r2"}[i]
		f := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		key := id + "/eval/metrics"
		_, err := artifacts.Publish(ctx, s, key, f, artifacts.Metadata{Type: "Metrics"})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &record.Run{ID: id, Steps: []record.StepRecord{{Name: "eval", Status: record.StatusSucceeded,
			Outputs: []record.OutputRecord{{Name: "metrics", Type: "Metrics", URI: s.URI(key)}}}}})
	}
	c, err := Compare(ctx, s, recs, DefaultCompareLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Source: "eval/metrics", Name: "acc", Values: []*string{str("0.5"), str("0.75")}, Differs: true},
		{Source: "eval/metrics", Name: "loss", Values: []*string{nil, str("1")}, Differs: true},
	}
	if diff := cmp.Diff(want, c.Metrics); diff != "" || c.Omitted != 0 {
		t.Errorf("metrics (-want +got):\n%s\nomitted %d", diff, c.Omitted)
	}
	// A budget for one metric: the second run's two are left out.
	c, err = Compare(ctx, s, recs, CompareLimits{OutputBytes: 1 << 20, Bytes: 1 << 20, Metrics: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Omitted != 1 || len(c.Metrics) != 1 {
		t.Errorf("with room for 1 metric: %d metric rows, %d omitted; want 1 and 1", len(c.Metrics), c.Omitted)
	}
}

// TestCompareLinear: two runs of 100,000 params and 10,000 steps each are
// lined up in well under a second (each name looked up in a set, each
// step by name in a map: the scans that did it took minutes).
func TestCompareLinear(t *testing.T) {
	const params, steps = 100000, 10000
	var recs []*record.Run
	for i := range 2 {
		r := &record.Run{ID: fmt.Sprint(i), Params: map[string]string{}}
		for p := range params {
			r.Params[fmt.Sprintf("p%d", p)] = fmt.Sprint(p * i)
		}
		for s := range steps {
			r.Steps = append(r.Steps, record.StepRecord{Name: fmt.Sprintf("s%d", s), Status: record.StatusSucceeded, Code: fmt.Sprint(s + i)})
		}
		recs = append(recs, r)
	}
	start := time.Now()
	c := compareRuns(recs, []map[[2]string]string{{}, {}})
	took := time.Since(start)
	if len(c.Params) != params || len(c.Steps) != steps || !c.Params[params-1].Differs || !c.Code[steps-1].Differs || c.Steps[0].Differs {
		t.Fatalf("compared %d params and %d steps, want %d and %d with the right rows differing", len(c.Params), len(c.Steps), params, steps)
	}
	if took > 5*time.Second {
		t.Errorf("comparing took %v", took)
	}
	t.Logf("%d params and %d steps in each of 2 runs compared in %v", params, steps, took)
}
