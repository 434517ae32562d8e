package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// countingRecords counts the records read.
type countingRecords struct {
	storeRecords
	gets atomic.Int64
}

func (c *countingRecords) Get(ctx context.Context, id string) (*record.Run, error) {
	c.gets.Add(1)
	return c.storeRecords.Get(ctx, id)
}

// openStream opens the event stream of r1 and reads its first event.
func openStream(t *testing.T, srv *httptest.Server) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs/r1/events", nil)
	req.Host = "localhost"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "event: run\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	return resp, br
}

// TestEventsSharePoller: 12 streams of one running run read its record
// once per poll between them (a poller per stream read it 12 times), and
// every stream gets the change and the end.
func TestEventsSharePoller(t *testing.T) {
	const n, polls = 12, 10
	store, rec := fixture(t)
	rec.Status, rec.Finished = record.StatusRunning, nil
	ctx := context.Background()
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	recs := &countingRecords{storeRecords: storeRecords{store}}
	const poll = 20 * time.Millisecond
	h, err := New(Options{Store: store, Records: recs, Poll: poll})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var readers []*bufio.Reader
	for range n {
		resp, br := openStream(t, srv)
		defer resp.Body.Close()
		readers = append(readers, br)
	}
	before := recs.gets.Load()
	time.Sleep(polls * poll)
	if got := recs.gets.Load() - before; got > polls+2 {
		t.Errorf("%d streams read the record %d times in %d polls, want at most one read per poll", n, got, polls)
	}
	end := time.Now()
	rec.Status, rec.Finished = record.StatusSucceeded, &end
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	for i, br := range readers {
		rest, err := io.ReadAll(br)
		if err != nil || !strings.Contains(string(rest), `"status":"Succeeded"`) || !strings.HasSuffix(string(rest), "event: end\ndata: {}\n\n") {
			t.Errorf("stream %d: %q, %v", i, rest, err)
		}
	}
}

// TestStreamCap: a client past its stream cap gets 429 saying so, an
// ordinary request is still served, and a closed stream frees its slot.
func TestStreamCap(t *testing.T) {
	store, rec := fixture(t)
	rec.Status, rec.Finished = record.StatusRunning, nil
	if err := recordstore.WriteRun(context.Background(), store, rec); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Store: store, Records: storeRecords{store}, Poll: 20 * time.Millisecond, StreamsPerClient: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var open []*http.Response
	for range 3 {
		resp, _ := openStream(t, srv)
		defer resp.Body.Close()
		open = append(open, resp)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs/r1/events", nil)
	req.Host = "localhost"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body["error"], "at most 3 per client") {
		t.Errorf("a 4th stream: %d %q, want 429 naming the cap", resp.StatusCode, body["error"])
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/api/runs", nil)
	req.Host = "localhost"
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/runs with 3 streams open: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
	open[0].Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs/r1/events", nil)
		req.Host = "localhost"
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream closed 5 s ago still holds its slot: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunsQuery: /api/runs refuses a query it does not take with 400 and
// what it takes; a record whose id is not its folder's is skipped.
func TestRunsQuery(t *testing.T) {
	store, _ := fixture(t)
	bad := &record.Run{ID: "../../x", Status: record.StatusSucceeded}
	b, _ := json.Marshal(bad)
	if err := store.Put(context.Background(), record.RunKey("evil"), strings.NewReader(string(b)), -1); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, store, "")
	for q, want := range map[string]string{
		"?status=Bogus":                 `status \"Bogus\": want one of Pending, Running, Succeeded, Failed, Cancelled`,
		"?colour=red":                   `query parameter \"colour\": /api/runs takes pipeline=P and status=S`,
		"?status=Failed&status=Running": `query parameter \"status\" given 2 times`,
	} {
		w := get(h, "/api/runs"+q, "Host", "localhost")
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), want) {
			t.Errorf("GET /api/runs%s: %d %s, want 400 with %s", q, w.Code, w.Body, want)
		}
	}
	w := get(h, "/api/runs?status=succeeded&pipeline=p", "Host", "localhost")
	var runs []map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &runs); w.Code != http.StatusOK || err != nil || len(runs) != 1 || runs[0]["id"] != "r1" {
		t.Errorf("GET /api/runs?status=succeeded&pipeline=p: %d %s, want r1 alone", w.Code, w.Body)
	}
}
