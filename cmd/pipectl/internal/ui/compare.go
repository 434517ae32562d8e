package ui

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runview"
)

// maxCompare bounds the runs of one comparison.
const maxCompare = 12

// Comparison is GET /api/compare's answer (runview.Comparison).
type Comparison = runview.Comparison

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

func (s *server) compare(r *http.Request) (*Comparison, []*record.Run, error) {
	ids, err := compareIDs(r)
	if err != nil {
		return nil, nil, err
	}
	var recs []*record.Run
	for _, id := range ids {
		rec, err := s.Records.Get(r.Context(), id)
		if err != nil {
			return nil, nil, err
		}
		recs = append(recs, rec)
	}
	c, err := runview.Compare(r.Context(), s.Store, recs, runview.DefaultCompareLimits)
	return c, recs, err
}
