package ui

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runview"
)

// cmpSection is a titled group of the compare page's rows.
type cmpSection struct {
	Title, Key string
	Rows       []cmpRow
	// Empty is said when the group has no rows (nothing when "").
	Empty string
}

// cmpRow is one row of the compare page: a param, metric, output, step
// field or origin field across the runs.
type cmpRow struct {
	Name, Source string
	Differs      bool
	Cells        []cmpCell
}

// cmpCell is one run's value of a row, as shown.
type cmpCell struct {
	// Value is the value as written; Missing says the run has none.
	Value   string
	Missing bool
	// Digest is the shortened form of a digest (its first 12 hex digits),
	// "" for any other value; the page offers the whole one to copy.
	Digest string
	// Changed says the value is not the first run's (the row differs).
	Changed bool
	// Delta is a number's difference to the first run's, signed ("+0.05").
	Delta string
}

// digestHex is how many hex digits of a digest the compare page shows.
const digestHex = 12

// shortDigest is the first digestHex hex digits of v when v is a digest
// (an optional "sha256:" and at least 32 hex digits), else "".
func shortDigest(v string) string {
	h := strings.TrimPrefix(v, "sha256:")
	if len(h) < 32 {
		return ""
	}
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	return h[:digestHex]
}

// compareSections are the rows of c in the order the page shows them:
// metrics first (what one compares runs for), then params, the steps'
// outputs, their statuses, then the digests of what they ran, the origin.
func compareSections(c *runview.Comparison, recs []*record.Run) []cmpSection {
	return []cmpSection{
		{Title: "Metrics", Key: "metric", Rows: cmpRows(c.Metrics, true), Empty: "None of these runs has a Metrics output."},
		{Title: "Params", Key: "param", Rows: cmpRows(c.Params, false), Empty: "No params."},
		{Title: "Outputs", Key: "output", Rows: cmpRows(outputRows(recs), false)},
		{Title: "Steps", Key: "steps", Rows: cmpRows(c.Steps, false)},
		{Title: "Code", Key: "code", Rows: cmpRows(c.Code, false)},
		{Title: "Images", Key: "images", Rows: cmpRows(c.Images, false)},
		{Title: "Fingerprints", Key: "fingerprints", Rows: cmpRows(c.Fingerprints, false)},
		{Title: "Origin", Key: "origin", Rows: cmpRows(c.Origin, false)},
	}
}

// cmpRows are rows as shown: each value against the first run's, a
// number's difference to it when numbers says so; a row no run has a
// value of is left out.
func cmpRows(rows []runview.Row, numbers bool) []cmpRow {
	out := make([]cmpRow, 0, len(rows))
	for _, r := range rows {
		if !slices.ContainsFunc(r.Values, func(v *string) bool { return v != nil }) {
			continue // no run has one (an image on a local run)
		}
		row := cmpRow{Name: r.Name, Source: r.Source, Differs: r.Differs}
		var base *string
		if len(r.Values) > 0 {
			base = r.Values[0]
		}
		for i, v := range r.Values {
			cell := cmpCell{Missing: v == nil}
			if v != nil {
				cell.Value, cell.Digest = *v, shortDigest(*v)
			}
			if i > 0 && r.Differs {
				cell.Changed = (v == nil) != (base == nil) || (v != nil && *v != *base)
				if numbers && cell.Changed && v != nil && base != nil {
					cell.Delta = delta(*base, *v)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		out = append(out, row)
	}
	return out
}

// delta is b-a, signed and rounded for display, when both are numbers.
func delta(a, b string) string {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	d := y - x
	if err1 != nil || err2 != nil || math.IsNaN(d) || math.IsInf(d, 0) {
		return ""
	}
	s := strconv.FormatFloat(d, 'g', displayDigits, 64)
	if d >= 0 {
		s = "+" + s
	}
	return s
}

// outputRows are the steps' outputs across recs, STEP/OUTPUT: a
// parameter's value, an artifact's digest (loop iterations left out: their
// outputs are the loop step's).
func outputRows(recs []*record.Run) []runview.Row {
	var names []string
	seen := map[string]bool{}
	values := make([]map[string]string, len(recs))
	for i, r := range recs {
		values[i] = map[string]string{}
		for _, st := range r.Steps {
			if strings.Contains(st.Name, "[") {
				continue
			}
			for _, o := range st.Outputs {
				name := st.Name + "/" + o.Name
				v := o.SHA256
				if o.URI == "" && o.Value != nil {
					v = *o.Value
				}
				if _, dup := values[i][name]; !dup && v != "" {
					values[i][name] = v
					if !seen[name] {
						seen[name] = true
						names = append(names, name)
					}
				}
			}
		}
	}
	rows := make([]runview.Row, 0, len(names))
	for _, name := range names {
		row := runview.Row{Name: name}
		for i := range recs {
			if v, ok := values[i][name]; ok {
				row.Values = append(row.Values, &v)
			} else {
				row.Values = append(row.Values, nil)
			}
		}
		for _, v := range row.Values[1:] {
			if (v == nil) != (row.Values[0] == nil) || (v != nil && *v != *row.Values[0]) {
				row.Differs = true
			}
		}
		rows = append(rows, row)
	}
	return rows
}
