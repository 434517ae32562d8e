package ui

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection bounds of the UI's server (see NewServer).
const (
	// MaxConns is the number of connections the server keeps open at once.
	MaxConns = 256
	// IdleTimeout closes a keep-alive connection that sends no request.
	IdleTimeout = 60 * time.Second
	// ReadHeaderTimeout closes a connection whose request headers are not
	// read in time (a slow or silent client).
	ReadHeaderTimeout = 10 * time.Second
	// maxHeaderBytes bounds a request's headers (the UI takes only GETs).
	maxHeaderBytes = 64 << 10
)

// NewServer returns the http.Server for handler h and the listener to
// serve it on: ln, holding at most maxConns connections (MaxConns when 0).
// Idle keep-alive connections close after IdleTimeout, silent ones after
// ReadHeaderTimeout; and when the limit is reached a new connection makes
// room by closing the connection idle the longest (or, with none idle, the
// oldest that has not sent a request yet), so a client holding thousands of
// idle connections never locks out a fresh request. Streams (events, long
// downloads) are not cut: a connection serving a request stays.
func NewServer(h http.Handler, ln net.Listener, maxConns int, base context.Context) (*http.Server, net.Listener) {
	if maxConns <= 0 {
		maxConns = MaxConns
	}
	l := &limitListener{Listener: ln, max: maxConns, conns: map[net.Conn]*connState{}}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         l.track,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	return srv, l
}

type connState struct {
	state http.ConnState
	since time.Time
}

// limitListener accepts connections up to max open at once, closing an
// idle (or new, silent) one to make room for each beyond.
type limitListener struct {
	net.Listener
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*connState
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.admit(c) {
			return c, nil
		}
		// Every connection is serving a request: refuse this one rather
		// than hold descriptors without bound.
		c.Close()
	}
}

// admit records c as open, closing the connection idle the longest (or
// silent the longest) when the limit is reached; it reports false when
// every open connection is serving a request.
func (l *limitListener) admit(c net.Conn) bool {
	l.mu.Lock()
	var victim net.Conn
	if len(l.conns) >= l.max {
		victim = l.oldest(http.StateIdle)
		if victim == nil {
			victim = l.oldest(http.StateNew)
		}
		if victim != nil {
			delete(l.conns, victim)
		}
	}
	ok := len(l.conns) < l.max
	if ok {
		l.conns[c] = &connState{state: http.StateNew, since: time.Now()}
	}
	l.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
	return ok
}

// oldest returns the connection in state st the longest, or nil.
func (l *limitListener) oldest(st http.ConnState) net.Conn {
	var out net.Conn
	var since time.Time
	for c, s := range l.conns {
		if s.state == st && (out == nil || s.since.Before(since)) {
			out, since = c, s.since
		}
	}
	return out
}

// track follows the states of the connections (http.Server.ConnState).
func (l *limitListener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.conns[c]
	switch {
	case st == http.StateClosed || st == http.StateHijacked:
		delete(l.conns, c)
	case ok:
		s.state, s.since = st, time.Now()
	}
}
