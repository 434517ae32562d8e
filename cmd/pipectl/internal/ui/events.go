package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// heartbeat is how often an idle event stream sends a comment, so proxies
// keep it open.
const heartbeat = 15 * time.Second

// apiEvents is GET /api/runs/RUN/events: server-sent events. Event "run"
// carries the run record (the /api/runs/RUN JSON on one line) when it
// changed, first at once; event "end" follows the record of a run that is
// no longer Running, and the stream closes. Event "problem" says why the
// record could not be read (the stream goes on).
func (s *server) apiEvents(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, fmt.Errorf("streaming is not supported here"))
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	ctx := r.Context()
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	var last []byte
	quiet := time.Now()
	for {
		b, err := json.Marshal(rec)
		if err != nil {
			return
		}
		if !bytes.Equal(b, last) {
			fmt.Fprintf(w, "event: run\ndata: %s\n\n", b)
			last, quiet = b, time.Now()
		}
		if rec.Status != record.StatusRunning && rec.Status != record.StatusPending {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		if time.Since(quiet) > heartbeat {
			fmt.Fprint(w, ": still running\n\n")
			quiet = time.Now()
		}
		fl.Flush()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		next, err := s.Records.Get(ctx, rec.ID)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			msg, _ := json.Marshal(map[string]string{"error": err.Error()})
			fmt.Fprintf(w, "event: problem\ndata: %s\n\n", msg)
			continue
		}
		rec = next
	}
}
