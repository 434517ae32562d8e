package runview

import (
	"cmp"
	"context"
	"io"
	"maps"
	"slices"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// Comparison is runs side by side, as `pipectl runs diff` and the UI's
// compare page (GET /api/compare) show them: the runs, then one row per
// param, per step (its status, its code's digest, its image, its
// fingerprint), per origin field and per metric, with each run's value
// (null where a run has none). Its fields are stable.
type Comparison struct {
	Runs   []Summary `json:"runs"`
	Params []Row     `json:"params"`
	// Steps are the steps' statuses; Code, Images and Fingerprints what
	// each step ran: the same fingerprint means the same component,
	// values, inputs and code (package stepcache).
	Steps        []Row `json:"steps"`
	Code         []Row `json:"code"`
	Images       []Row `json:"images"`
	Fingerprints []Row `json:"fingerprints"`
	// Origin is where each run came from: pipectl's version, and the git
	// commit, branch, dirty flag and diff of the pipeline's checkout.
	Origin  []Row `json:"origin"`
	Metrics []Row `json:"metrics"`
	// Omitted counts the Metrics outputs left out: past the bytes or the
	// number of metrics a comparison may read (CompareLimits).
	Omitted int `json:"omitted,omitempty"`
}

// Row is one param, step field, origin field or metric across the
// compared runs.
type Row struct {
	// Source is the Metrics output a metric comes from, as STEP/OUTPUT.
	Source string    `json:"source,omitempty"`
	Name   string    `json:"name"`
	Values []*string `json:"values"`
	// Differs is true when the runs do not all have the same value.
	Differs bool `json:"differs"`
}

// Groups are the comparison's rows by group, in the order shown.
func (c *Comparison) Groups() []Group {
	return []Group{
		{"Params", c.Params}, {"Steps", c.Steps}, {"Code", c.Code}, {"Images", c.Images},
		{"Fingerprints", c.Fingerprints}, {"Origin", c.Origin}, {"Metrics", c.Metrics},
	}
}

// Group is a titled list of rows.
type Group struct {
	Title string
	Rows  []Row
}

// CompareLimits bound what a comparison reads of the runs' Metrics
// outputs: one output's bytes (a larger one is not read), the bytes of all
// and the metrics held. A run with a 20-iteration loop of 1 MiB metrics
// once made one comparison read 940 MB.
type CompareLimits struct {
	OutputBytes, Bytes int64
	Metrics            int
}

// DefaultCompareLimits are the limits of the CLI and the UI.
var DefaultCompareLimits = CompareLimits{OutputBytes: 1 << 20, Bytes: 8 << 20, Metrics: 5000}

// Compare lines up recs, reading their Metrics outputs from s within
// limits.
func Compare(ctx context.Context, s artifacts.Store, recs []*record.Run, limits CompareLimits) (*Comparison, error) {
	var metrics []map[[2]string]string
	budget := &limits
	omitted := 0
	for _, rec := range recs {
		m, n, err := runMetrics(ctx, s, rec, budget)
		if err != nil {
			return nil, err
		}
		metrics = append(metrics, m)
		omitted += n
	}
	c := compareRuns(recs, metrics)
	c.Omitted = omitted
	return c, nil
}

// runMetrics reads the Metrics outputs of rec, (STEP/OUTPUT, name) →
// value, within what is left of budget, which it spends; it returns how
// many outputs it left out.
func runMetrics(ctx context.Context, s artifacts.Store, rec *record.Run, budget *CompareLimits) (map[[2]string]string, int, error) {
	out := map[[2]string]string{}
	omitted := 0
	for _, st := range rec.Steps {
		for _, o := range st.Outputs {
			if o.Type != "Metrics" || o.URI == "" {
				continue
			}
			key, err := artifacts.SplitURI(s, o.URI)
			if err != nil {
				continue // not in this store: nothing to compare
			}
			meta, err := artifacts.ReadMetadata(ctx, s, key)
			if err != nil || meta.Kind == artifacts.KindDirectory || meta.Size > budget.OutputBytes {
				continue // not a readable metrics file
			}
			if meta.Size > budget.Bytes || budget.Metrics <= 0 {
				omitted++
				continue
			}
			budget.Bytes -= meta.Size
			body, err := artifacts.GetRange(ctx, s, key, 0, meta.Size)
			if err != nil {
				return nil, 0, err
			}
			data, err := io.ReadAll(body)
			body.Close()
			if err != nil {
				return nil, 0, err
			}
			ms, _ := ParseMetrics(data)
			if len(ms) > budget.Metrics {
				omitted++
				continue
			}
			budget.Metrics -= len(ms)
			for _, m := range ms {
				out[[2]string{st.Name + "/" + o.Name, m.Name}] = m.Value
			}
		}
	}
	return out, omitted, nil
}

// compareRuns lines up recs (metrics[i] are those of recs[i]), each group
// sorted by name (steps in the order of the first run that has them).
func compareRuns(recs []*record.Run, metrics []map[[2]string]string) *Comparison {
	c := &Comparison{Runs: []Summary{}}
	for _, r := range recs {
		c.Runs = append(c.Runs, Summarize(r))
	}
	c.Params = rows(recs, sortedKeys(recs, func(r *record.Run) []string { return slices.Collect(maps.Keys(r.Params)) }),
		func(r *record.Run, name string) (string, bool) { v, ok := r.Params[name]; return v, ok })
	var steps []string
	seen := map[string]bool{}
	byName := map[*record.Run]map[string]*record.StepRecord{} // not r.Step: one scan per lookup made diff quadratic
	for _, r := range recs {
		byName[r] = map[string]*record.StepRecord{}
		for i := range r.Steps {
			s := &r.Steps[i]
			if _, dup := byName[r][s.Name]; !dup {
				byName[r][s.Name] = s
			}
			if !seen[s.Name] {
				seen[s.Name] = true
				steps = append(steps, s.Name)
			}
		}
	}
	field := func(get func(*record.StepRecord) string) func(*record.Run, string) (string, bool) {
		return func(r *record.Run, name string) (string, bool) {
			s := byName[r][name]
			if s == nil || get(s) == "" {
				return "", false
			}
			return get(s), true
		}
	}
	c.Steps = rows(recs, steps, field(func(s *record.StepRecord) string {
		if s.Cached {
			return s.Status + " (cached)"
		}
		return s.Status
	}))
	c.Code = rows(recs, steps, field(func(s *record.StepRecord) string { return s.Code }))
	c.Images = rows(recs, steps, field(func(s *record.StepRecord) string { return s.Image }))
	c.Fingerprints = rows(recs, steps, field(func(s *record.StepRecord) string { return s.Fingerprint }))
	c.Origin = rows(recs, []string{"pipectl", "commit", "branch", "dirty", "diff"}, originField)
	keys := map[[2]string]bool{}
	for _, m := range metrics {
		for k := range m {
			keys[k] = true
		}
	}
	sorted := slices.SortedFunc(maps.Keys(keys), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	c.Metrics = []Row{}
	for _, k := range sorted {
		row := Row{Source: k[0], Name: k[1]}
		for _, m := range metrics {
			v, ok := m[k]
			row.Values = append(row.Values, value(v, ok))
		}
		c.Metrics = append(c.Metrics, differs(row))
	}
	return c
}

// originField is a field of a run's origin, by name.
func originField(r *record.Run, name string) (string, bool) {
	o := r.Origin
	if o == nil {
		return "", false
	}
	if name == "pipectl" {
		return o.Pipectl, o.Pipectl != ""
	}
	g := o.Git
	if g == nil {
		return "", false
	}
	switch name {
	case "commit":
		return g.Commit, g.Commit != ""
	case "branch":
		return g.Branch, g.Branch != ""
	case "dirty":
		if g.Dirty {
			return "yes", true
		}
		return "no", true
	default: // diff
		return g.DiffSHA256, g.DiffSHA256 != ""
	}
}

// sortedKeys is every key any run has, sorted.
func sortedKeys(recs []*record.Run, keys func(*record.Run) []string) []string {
	var all []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, k := range keys(r) {
			if !seen[k] {
				seen[k] = true
				all = append(all, k)
			}
		}
	}
	slices.Sort(all)
	return all
}

// rows is a row per name with each run's value.
func rows(recs []*record.Run, names []string, get func(*record.Run, string) (string, bool)) []Row {
	out := []Row{}
	for _, name := range names {
		row := Row{Name: name}
		for _, r := range recs {
			row.Values = append(row.Values, value(get(r, name)))
		}
		out = append(out, differs(row))
	}
	return out
}

func value(v string, ok bool) *string {
	if !ok {
		return nil
	}
	return &v
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
