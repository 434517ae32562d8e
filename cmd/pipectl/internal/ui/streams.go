package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// Bounds of the UI's event streams (GET /api/runs/RUN/events): a stream
// holds its connection while the run runs, so they are capped per client
// (its address) and in all, below MaxConns, so that ordinary requests are
// always served. A stream past a cap is answered 429.
const (
	MaxStreamsPerClient = 16
	MaxStreams          = MaxConns / 4
)

// streams counts the open streams and keeps one poller per run, shared
// by all the streams of that run.
type streams struct {
	mu        sync.Mutex
	perClient map[string]int
	total     int
	polls     map[string]*runPoll
}

func newStreams() *streams {
	return &streams{perClient: map[string]int{}, polls: map[string]*runPoll{}}
}

// acquire takes a stream slot for the client of r, or says why not.
func (s *server) acquire(r *http.Request) (release func(), err error) {
	client := r.RemoteAddr
	if h, _, err := net.SplitHostPort(client); err == nil {
		client = h
	}
	st := s.streams
	st.mu.Lock()
	defer st.mu.Unlock()
	if n := st.perClient[client]; n >= s.StreamsPerClient {
		return nil, &httpError{http.StatusTooManyRequests, fmt.Sprintf("%d live streams from %s already (at most %d per client): close a page that follows a run", n, client, s.StreamsPerClient)}
	}
	if st.total >= s.Streams {
		return nil, &httpError{http.StatusTooManyRequests, fmt.Sprintf("%d live streams already (at most %d): try again later", st.total, s.Streams)}
	}
	st.perClient[client]++
	st.total++
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.perClient[client]--; st.perClient[client] <= 0 {
			delete(st.perClient, client)
		}
		st.total--
	}, nil
}

// runPoll reads one run's record every poll for all its streams, and
// marshals it once per change.
type runPoll struct {
	mu   sync.Mutex
	subs int
	stop context.CancelFunc
	snap pollSnapshot
	// changed is closed (and replaced) at each change of snap.
	changed chan struct{}
}

// pollSnapshot is what the streams of a run send: the record's JSON
// (version run), the last problem reading it (version problem), and done
// once the run no longer runs.
type pollSnapshot struct {
	run, problem       []byte
	runVer, problemVer int
	done               bool
}

func finished(rec *record.Run) bool {
	return rec.Status != record.StatusRunning && rec.Status != record.StatusPending
}

// subscribe joins the poller of rec's run, starting it with rec when it
// has none; leave must be called when the stream ends.
func (s *server) subscribe(rec *record.Run) (p *runPoll, leave func(), err error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, err
	}
	st := s.streams
	st.mu.Lock()
	defer st.mu.Unlock()
	p = st.polls[rec.ID]
	if p == nil {
		ctx, stop := context.WithCancel(context.Background())
		p = &runPoll{stop: stop, changed: make(chan struct{}), snap: pollSnapshot{run: b, runVer: 1, done: finished(rec)}}
		if !p.snap.done {
			st.polls[rec.ID] = p
			go s.poll(ctx, rec, p)
		}
	}
	p.mu.Lock()
	p.subs++
	p.mu.Unlock()
	return p, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.subs--; p.subs == 0 {
			p.stop()
			if st.polls[rec.ID] == p {
				delete(st.polls, rec.ID)
			}
		}
	}, nil
}

// poll reads the record every s.Poll until ctx ends or the run is done.
func (s *server) poll(ctx context.Context, rec *record.Run, p *runPoll) {
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	last := p.snap.run
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		next, err := s.Records.Get(ctx, rec.ID)
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		switch {
		case err != nil:
			p.snap.problem, _ = json.Marshal(map[string]string{"error": err.Error()})
			p.snap.problemVer++
		default:
			if b, err := json.Marshal(next); err == nil && string(b) != string(last) {
				p.snap.run, p.snap.runVer, last = b, p.snap.runVer+1, b
			}
			p.snap.done = finished(next)
		}
		close(p.changed)
		p.changed = make(chan struct{})
		done := p.snap.done
		p.mu.Unlock()
		if done {
			s.streams.mu.Lock()
			if s.streams.polls[rec.ID] == p {
				delete(s.streams.polls, rec.ID)
			}
			s.streams.mu.Unlock()
			return
		}
	}
}

// state is p's snapshot and the channel closed at its next change.
func (p *runPoll) state() (pollSnapshot, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snap, p.changed
}
