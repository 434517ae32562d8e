package ui

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/runview"
)

// Comparison is GET /api/compare's answer: the runs, then one row per
// param and per metric with each run's value (null where a run has none).
type Comparison struct {
	Runs    []runview.Summary `json:"runs"`
	Params  []Row             `json:"params"`
	Metrics []Row             `json:"metrics"`
	// Omitted counts the Metrics outputs left out: past compareBytes read
	// in all, or past maxMetrics metrics.
	Omitted int `json:"omitted,omitempty"`
}

// Row is one param or metric across the compared runs.
type Row struct {
	// Source is the Metrics output a metric comes from, as STEP/OUTPUT.
	Source string    `json:"source,omitempty"`
	Name   string    `json:"name"`
	Values []*string `json:"values"`
	// Differs is true when the runs do not all have the same value.
	Differs bool `json:"differs"`
}

// maxCompare bounds the runs of one comparison.
const maxCompare = 12

// metricsBytes bounds the Metrics output read for a comparison.
const metricsBytes = 1 << 20

// compareBytes bounds the bytes of Metrics outputs one comparison reads in
// all, and maxMetrics the metrics it holds: a run with a 20-iteration loop
// of 1 MiB metrics made one comparison read 940 MB.
const (
	compareBytes = 8 << 20
	maxMetrics   = 5000
)

// metricsBudget is what a comparison may still read and hold.
type metricsBudget struct {
	bytes   int64
	metrics int
	omitted int
}

// compareIDs returns the runs a compare URL names: ?runs=A,B or ?run=A&run=B.
func compareIDs(r *http.Request) ([]string, error) {
	var ids []string
	q := r.URL.Query()
	for _, v := range append(q["runs"], q["run"]...) {
		for id := range strings.SplitSeq(v, ",") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, &httpError{http.StatusBadRequest, "name the runs to compare: /compare?runs=RUN1,RUN2"}
	}
	if len(ids) > maxCompare {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("%d runs: compare at most %d at once", len(ids), maxCompare)}
	}
	return ids, nil
}

func (s *server) compare(r *http.Request) (*Comparison, error) {
	ids, err := compareIDs(r)
	if err != nil {
		return nil, err
	}
	var recs []*artifacts.Run
	var metrics []map[[2]string]string
	budget := &metricsBudget{bytes: compareBytes, metrics: maxMetrics}
	for _, id := range ids {
		rec, err := s.Records.Get(r.Context(), id)
		if err != nil {
			return nil, err
		}
		m, err := s.runMetrics(r.Context(), rec, budget)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		metrics = append(metrics, m)
	}
	c := compareRuns(recs, metrics)
	c.Omitted = budget.omitted
	return c, nil
}

// runMetrics reads the Metrics outputs of rec: (STEP/OUTPUT, name) → value.
func (s *server) runMetrics(ctx context.Context, rec *artifacts.Run, budget *metricsBudget) (map[[2]string]string, error) {
	out := map[[2]string]string{}
	for _, st := range rec.Steps {
		for _, o := range st.Outputs {
			if o.Type != "Metrics" || o.URI == "" {
				continue
			}
			obj, err := findOutput(ctx, s.Store, rec, st.Name, o.Name, "")
			if err != nil || obj.Dir || obj.Size > metricsBytes {
				continue // not a readable metrics file: nothing to compare
			}
			if obj.Size > budget.bytes || budget.metrics <= 0 {
				budget.omitted++
				continue
			}
			budget.bytes -= obj.Size
			body, err := artifacts.GetRange(ctx, s.Store, obj.Key, 0, obj.Size)
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(body)
			body.Close()
			if err != nil {
				return nil, err
			}
			ms, _ := ParseMetrics(data)
			if len(ms) > budget.metrics {
				budget.omitted++
				continue
			}
			budget.metrics -= len(ms)
			for _, m := range ms {
				out[[2]string{st.Name + "/" + o.Name, m.Name}] = m.Value
			}
		}
	}
	return out, nil
}

// compareRuns lines up the params and metrics of recs (metrics[i] are those
// of recs[i]), sorted by name.
func compareRuns(recs []*artifacts.Run, metrics []map[[2]string]string) *Comparison {
	c := &Comparison{Runs: []runview.Summary{}, Params: []Row{}, Metrics: []Row{}}
	params := map[string]bool{}
	for _, r := range recs {
		c.Runs = append(c.Runs, runview.Summarize(r))
		for k := range r.Params {
			params[k] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		row := Row{Name: name}
		for _, r := range recs {
			var v *string
			if val, ok := r.Params[name]; ok {
				v = &val
			}
			row.Values = append(row.Values, v)
		}
		c.Params = append(c.Params, differs(row))
	}
	keys := map[[2]string]bool{}
	for _, m := range metrics {
		for k := range m {
			keys[k] = true
		}
	}
	sorted := slices.SortedFunc(maps.Keys(keys), func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	for _, k := range sorted {
		row := Row{Source: k[0], Name: k[1]}
		for _, m := range metrics {
			var v *string
			if val, ok := m[k]; ok {
				v = &val
			}
			row.Values = append(row.Values, v)
		}
		c.Metrics = append(c.Metrics, differs(row))
	}
	return c
}

func differs(row Row) Row {
	for _, v := range row.Values[1:] {
		a, b := row.Values[0], v
		if (a == nil) != (b == nil) || (a != nil && *a != *b) {
			row.Differs = true
		}
	}
	return row
}
