package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/runview"
)

// run reads the record the {run} of the URL names, or answers with an error.
func (s *server) run(w http.ResponseWriter, r *http.Request) (*record.Run, bool) {
	rec, err := s.Records.Get(r.Context(), r.PathValue("run"))
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return rec, true
}

// fail answers with err: 404 for what does not exist, 400 for a bad name,
// 500 otherwise. API requests get {"error": "..."}, pages an error page.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	switch {
	case errors.As(err, &he):
		code = he.code
	case errors.Is(err, artifacts.ErrNotFound):
		code = http.StatusNotFound
	case strings.Contains(err.Error(), "invalid"):
		code = http.StatusBadRequest
	}
	if code == http.StatusInternalServerError {
		s.Log.Error("request", "path", r.URL.Path, "err", err)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	s.render(w, "error", map[string]any{"Code": code, "Status": http.StatusText(code), "Message": err.Error(), "Root": s.Store.Root()})
}

// writeJSON writes v indented as the CLI's -o json does.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, err := artifacts.MarshalShallow(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(b)
}

// filterRuns returns the runs of the given pipeline and status (empty:
// any), as `pipectl runs ls -o json` entries.
func filterRuns(all []*record.Run, pipeline, status string) []runview.Summary {
	out := []runview.Summary{}
	for _, r := range all {
		if (pipeline == "" || r.Pipeline == pipeline) && (status == "" || strings.EqualFold(r.Status, status)) {
			out = append(out, runview.Summarize(r))
		}
	}
	return out
}

// apiRuns is GET /api/runs[?pipeline=P&status=S]: `pipectl runs ls -o json`.
func (s *server) apiRuns(w http.ResponseWriter, r *http.Request) {
	all, err := s.Records.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	if err := checkRunsQuery(q); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, filterRuns(all, q.Get("pipeline"), q.Get("status")))
}

// checkRunsQuery refuses a /api/runs query with a parameter it does not
// take, one given twice, or a status no run has, saying what it takes.
func checkRunsQuery(q url.Values) error {
	for k, v := range q {
		if k != "pipeline" && k != "status" {
			return &httpError{http.StatusBadRequest, fmt.Sprintf("query parameter %q: /api/runs takes pipeline=P and status=S", k)}
		}
		if len(v) > 1 {
			return &httpError{http.StatusBadRequest, fmt.Sprintf("query parameter %q given %d times: give it once", k, len(v))}
		}
	}
	if st := q.Get("status"); st != "" && !slices.ContainsFunc(runStatuses, func(s string) bool { return strings.EqualFold(s, st) }) {
		return &httpError{http.StatusBadRequest, fmt.Sprintf("status %q: want one of %s", st, strings.Join(runStatuses, ", "))}
	}
	return nil
}

// runStatuses are the statuses of a run.
var runStatuses = []string{record.StatusPending, record.StatusRunning, record.StatusSucceeded, record.StatusFailed, record.StatusCancelled}

// apiRun is GET /api/runs/RUN: `pipectl runs get RUN -o json`.
func (s *server) apiRun(w http.ResponseWriter, r *http.Request) {
	if rec, ok := s.run(w, r); ok {
		writeJSON(w, rec)
	}
}

// apiArtifacts is GET /api/runs/RUN/artifacts: `pipectl artifacts ls RUN -o json`.
func (s *server) apiArtifacts(w http.ResponseWriter, r *http.Request) {
	if rec, ok := s.run(w, r); ok {
		writeJSON(w, runview.Entries(rec))
	}
}

// logTail is how much of a log a first request without offset gets.
const logTail = 1 << 20

// Log sources, in the X-Log-Source header of a log: the store's copy, or
// the step's pod while it runs (the store has the log once the pod ended).
const (
	LogFromStore = "store"
	LogFromPod   = "pod"
)

// apiLog is GET /api/runs/RUN/logs/STEP: the step's log as `pipectl logs
// RUN STEP` prints it, or, while a cluster run's step runs, its pod's log
// so far (X-Log-Source says which). ?offset=N returns the bytes from N on
// (a live tail); without it, the last MiB. X-Log-Start and X-Log-End give
// the byte range sent; the next poll asks for ?offset=END.
func (s *server) apiLog(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	step := r.PathValue("step")
	st := rec.Step(step)
	if st == nil {
		s.fail(w, r, notFound("run %s has no step %q", rec.ID, step))
		return
	}
	ctx := r.Context()
	key := record.LogKey(rec.ID, step)
	info, err := s.Store.Stat(ctx, key)
	if errors.Is(err, artifacts.ErrNotFound) {
		reason := st.Status
		if st.Message != "" {
			reason += ": " + st.Message
		}
		if s.LiveLog != nil && st.Status == record.StatusRunning {
			b, ok, err := s.LiveLog(ctx, rec, step)
			if ok {
				s.sendLog(w, r, LogFromPod, int64(len(b)), func(start int64) (io.ReadCloser, error) {
					return io.NopCloser(bytes.NewReader(b[start:])), nil
				})
				return
			}
			if err != nil {
				reason += "; its pod's log: " + err.Error()
			}
		}
		s.fail(w, r, notFound("step %s of run %s has no log yet (%s)", step, rec.ID, reason))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.sendLog(w, r, LogFromStore, info.Size, func(start int64) (io.ReadCloser, error) {
		return artifacts.GetRange(ctx, s.Store, key, start, info.Size-start)
	})
}

// sendLog answers a log request for a log of size bytes from source; open
// reads it from a byte offset on.
func (s *server) sendLog(w http.ResponseWriter, r *http.Request, source string, size int64, open func(start int64) (io.ReadCloser, error)) {
	start := max(0, size-logTail)
	if o := r.URL.Query().Get("offset"); o != "" {
		n, err := strconv.ParseInt(o, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, r, &httpError{http.StatusBadRequest, fmt.Sprintf("offset %q: expected a byte offset (0 or more)", o)})
			return
		}
		// A log never shrinks but when it is replaced whole: start over.
		if start = n; n > size {
			start = 0
		}
	}
	body, err := open(start)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer body.Close()
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Log-Source", source)
	hd.Set("X-Log-Start", strconv.FormatInt(start, 10))
	hd.Set("X-Log-End", strconv.FormatInt(size, 10))
	hd.Set("Content-Length", strconv.FormatInt(size-start, 10))
	_, _ = io.Copy(w, body)
}

// apiCompare is GET /api/compare?runs=A,B: params and metrics of the runs
// side by side (see Comparison).
func (s *server) apiCompare(w http.ResponseWriter, r *http.Request) {
	c, _, err := s.compare(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, c)
}
