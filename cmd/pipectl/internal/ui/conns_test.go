package ui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLoadIdleConnections is the UI's load test (loopback only, bounded in
// count): a client opens 1000 keep-alive connections, each sending one
// request without the token and then idling. The server keeps at most its
// connection limit open, closing the idle ones, and a fresh request with
// the token is answered.
func TestLoadIdleConnections(t *testing.T) {
	const limit, attackers = 64, 1000
	store, _ := fixture(t)
	h := newHandler(t, store, "the-token-0123456789")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, lim := NewServer(h, ln, limit, ctx)
	go srv.Serve(lim)
	defer srv.Close()
	addr := ln.Addr().String()

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range attackers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /api/runs HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		// Read the (401) answer, leaving the connection idle; a
		// connection the server closed already reads EOF.
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	// Count the connections the server still holds open: a read on one it
	// closed ends at once, one it holds times out. A close the server has
	// just made may not have reached this end yet: the connections that
	// time out are read again after a pause, and those that still time
	// out are the ones it holds.
	held := func(conns []net.Conn) []net.Conn {
		var out []net.Conn
		for _, c := range conns {
			c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					out = append(out, c)
				}
			}
		}
		return out
	}
	still := held(conns)
	time.Sleep(200 * time.Millisecond)
	open := len(held(still))
	if open > limit {
		t.Errorf("the server holds %d of %d idle connections open, want at most %d", open, attackers, limit)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer the-token-0123456789")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a fresh request with the token: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(b), "[") {
		t.Errorf("a fresh request with the token: %s %s", resp.Status, b)
	}
}
