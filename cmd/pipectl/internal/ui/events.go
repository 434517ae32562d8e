package ui

import (
	"fmt"
	"net/http"
	"time"
)

// heartbeat is how often an idle event stream sends a comment, so proxies
// keep it open.
const heartbeat = 15 * time.Second

// apiEvents is GET /api/runs/RUN/events: server-sent events. Event "run"
// carries the run record (the /api/runs/RUN JSON on one line) when it
// changed, first at once; event "end" follows the record of a run that is
// no longer Running, and the stream closes. Event "problem" says why the
// record could not be read (the stream goes on). The streams of a run
// share one poller (one read and one marshal per poll, however many
// watch), and their number is capped (acquire).
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
	release, err := s.acquire(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer release()
	p, leave, err := s.subscribe(rec)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer leave()
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	ctx := r.Context()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	sentRun, sentProblem := 0, 0
	for {
		snap, changed := p.state()
		if snap.runVer != sentRun {
			fmt.Fprintf(w, "event: run\ndata: %s\n\n", snap.run)
			sentRun = snap.runVer
			beat.Reset(heartbeat)
		}
		if snap.problemVer != sentProblem {
			fmt.Fprintf(w, "event: problem\ndata: %s\n\n", snap.problem)
			sentProblem = snap.problemVer
		}
		if snap.done {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		fl.Flush()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-beat.C:
			fmt.Fprint(w, ": still running\n\n")
		}
	}
}
