package ui

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// storeRecords reads records straight from a store.
type storeRecords struct{ s artifacts.Store }

func (r storeRecords) List(ctx context.Context) ([]*record.Run, error) {
	return recordstore.ListRuns(ctx, r.s, nil)
}

func (r storeRecords) Get(ctx context.Context, id string) (*record.Run, error) {
	return runstore.Stored(ctx, r.s, id, nil)
}

const secret = "TOP-SECRET-NOT-AN-ARTIFACT"

// fixture is a local store with one run: step make with a file output
// (data), a directory output (tree) and a parameter; a log; and, next to
// the store and inside it, files no URL may reach.
func fixture(t *testing.T) (*artifacts.Local, *record.Run) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, ".cache/secret.json", strings.NewReader(secret), -1); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "r1/make/unlisted", strings.NewReader(secret), -1); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	mustWrite(t, filepath.Join(src, "data.csv"), "a,b\n1,2\n3,4\n")
	mustWrite(t, filepath.Join(src, "tree", "x.txt"), "x\n")
	mustWrite(t, filepath.Join(src, "tree", "sub", "y.txt"), "yy\n")
	rec := &record.Run{ID: "r1", Pipeline: "p", Status: record.StatusSucceeded, Started: time.Unix(100, 0).UTC(),
		Params: map[string]string{"lr": "0.1"}, On: "local", Schedule: "nightly", ScheduledTime: "2026-01-01T02:00:00+01:00",
		Origin: &record.Origin{Pipectl: "v9.9.9", Git: &record.GitOrigin{Commit: "c0ffee1234", Branch: "main", Remote: "https://git.example.com/ml.git", Dirty: true, DiffSHA256: strings.Repeat("d", 64)}}}
	end := time.Unix(160, 0).UTC()
	rec.Finished = &end
	code, v := 0, "7"
	st := record.StepRecord{Name: "make", Status: record.StatusSucceeded, ExitCode: &code, Code: "sha256:" + strings.Repeat("ab", 32)}
	for _, o := range []struct{ name, file, typ string }{{"data", "data.csv", "Dataset"}, {"tree", "tree", "Artifact"}} {
		key := record.OutputKey("r1", "make", o.name)
		meta, err := artifacts.Publish(ctx, store, key, filepath.Join(src, o.file), artifacts.Metadata{Type: o.typ})
		if err != nil {
			t.Fatal(err)
		}
		st.Outputs = append(st.Outputs, record.OutputRecord{Name: o.name, Type: o.typ, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256})
	}
	st.Outputs = append(st.Outputs, record.OutputRecord{Name: "count", Type: "int", Value: &v})
	rec.Steps = []record.StepRecord{st, {Name: "use", Status: record.StatusSkipped, DependsOn: []string{"make"}}}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	// use read make's data (its lineage, and make's data's readers).
	if err := recordstore.WriteInputs(ctx, store, record.StepInputs{Run: "r1", Step: "use",
		Inputs: []record.InputRecord{{Name: "d", URI: st.Outputs[0].URI, SHA256: st.Outputs[0].SHA256}}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, record.LogKey("r1", "make"), strings.NewReader("[make] one\n[make] two\n"), -1); err != nil {
		t.Fatal(err)
	}
	return store, rec
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newHandler(t *testing.T, store artifacts.Store, token string) http.Handler {
	t.Helper()
	h, err := New(Options{Store: store, Records: storeRecords{store}, Token: token, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get serves one request for path (Host 127.0.0.1:8421 unless given).
func get(h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8421"+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// No URL reaches an object the run record and the output's metadata do not
// name: not the store's other objects, not files beside the store.
func TestNoTraversal(t *testing.T) {
	store, _ := fixture(t)
	h := newHandler(t, store, "")
	paths := []string{
		"/api/runs/..%2Fsecret.txt",
		"/api/runs/..%2F..%2Fsecret.txt/artifacts",
		"/api/runs/.cache",
		"/api/runs/.cache/artifacts/secret.json/x",
		"/api/runs/r1/artifacts/make/unlisted",
		"/api/runs/r1/artifacts/make/..%2F..%2F.cache%2Fsecret.json",
		"/api/runs/r1/artifacts/make/tree/..%2F..%2F..%2Fsecret.txt",
		"/api/runs/r1/artifacts/make/tree/..%2Funlisted",
		"/api/runs/r1/artifacts/make/tree/%2E%2E/unlisted",
		"/api/runs/r1/artifacts/make/data/..%2Funlisted",
		"/api/runs/r1/artifacts/..%2F.cache/secret.json",
		"/api/runs/r1/artifacts/make/count",
		"/api/runs/r1/logs/..%2F..%2Fsecret.txt",
		"/api/runs/r1/logs/make%2F..%2Funlisted",
		"/runs/..%2F..%2Fsecret.txt",
		"/runs/r1?step=make&file=tree/../unlisted",
		"/runs/r1?step=make&file=tree/..%2F..%2F..%2Fsecret.txt",
		"/static/../../secret.txt",
		"/static/..%2F..%2Fsecret.txt",
		"/compare?runs=..%2Fsecret.txt",
	}
	for _, p := range paths {
		w := get(h, p)
		body := w.Body.String()
		if strings.Contains(body, secret) {
			t.Errorf("GET %s (%d) gave the secret", p, w.Code)
		}
		if w.Code == http.StatusOK && !strings.HasPrefix(p, "/runs/r1?") {
			t.Errorf("GET %s = 200; want an error", p)
		}
	}
}

func TestToken(t *testing.T) {
	store, _ := fixture(t)
	h := newHandler(t, store, "s3cret-token")
	cases := []struct {
		name   string
		path   string
		header []string
		code   int
	}{
		{"none", "/api/runs", nil, http.StatusUnauthorized},
		{"wrong query", "/api/runs?token=nope", nil, http.StatusUnauthorized},
		{"wrong bearer", "/api/runs", []string{"Authorization", "Bearer nope"}, http.StatusUnauthorized},
		{"bearer", "/api/runs", []string{"Authorization", "Bearer s3cret-token"}, http.StatusOK},
		{"cookie", "/api/runs", []string{"Cookie", TokenCookie + "=s3cret-token"}, http.StatusOK},
		{"query: a cookie and a clean URL", "/runs/r1?step=make&token=s3cret-token", nil, http.StatusSeeOther},
		{"any host with the token", "/api/runs", []string{"Authorization", "Bearer s3cret-token", "Host", "ml-box.internal:8421"}, http.StatusOK},
	}
	for _, c := range cases {
		w := get(h, c.path, c.header...)
		if w.Code != c.code {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.code)
		}
		if strings.Contains(w.Body.String(), "s3cret-token") {
			t.Errorf("%s: the token is in the answer", c.name)
		}
	}
	w := get(h, "/runs/r1?step=make&token=s3cret-token")
	if loc := w.Header().Get("Location"); loc != "/runs/r1?step=make" {
		t.Errorf("redirect to %q", loc)
	}
	if c := w.Result().Cookies(); len(c) != 1 || c[0].Value != "s3cret-token" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookies %+v", c)
	}
}

func TestLoopbackOnlyAndReadOnly(t *testing.T) {
	store, _ := fixture(t)
	h := newHandler(t, store, "")
	for host, want := range map[string]int{
		"127.0.0.1:8421": 200, "localhost:8421": 200, "[::1]:8421": 200, "LOCALHOST": 200,
		"evil.example:8421": 403, "10.0.0.5:8421": 403, "127.0.0.1.evil.example": 403,
	} {
		if w := get(h, "/api/runs", "Host", host); w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req := httptest.NewRequest(m, "http://127.0.0.1:8421/api/runs/r1", strings.NewReader("{}"))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, w.Code)
		}
	}
	if w := get(h, "/"); !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") || w.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("security headers missing: %v", w.Header())
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8421": true, "localhost:0": true, "[::1]:80": true, "127.1.2.3:1": true,
		":8421": false, "0.0.0.0:8421": false, "192.168.1.4:8421": false, "[::]:8421": false,
	} {
		got, err := Loopback(addr)
		if err != nil || got != want {
			t.Errorf("Loopback(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := Loopback("8421"); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("Loopback(8421) error %v", err)
	}
}

// The API answers in the shapes of the CLI's -o json.
func TestAPIShapes(t *testing.T) {
	store, rec := fixture(t)
	h := newHandler(t, store, "")
	check := func(path string, want any) {
		t.Helper()
		w := get(h, path)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s\n%s", path, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
		b, _ := json.MarshalIndent(want, "", "  ")
		if diff := cmp.Diff(string(b)+"\n", w.Body.String()); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", path, diff)
		}
	}
	check("/api/runs", []runview.Summary{runview.Summarize(rec)})
	check("/api/runs?status=failed", []runview.Summary{})
	check("/api/runs?pipeline=p&status=Succeeded", []runview.Summary{runview.Summarize(rec)})
	check("/api/runs/r1", rec)
	check("/api/runs/latest", rec)
	check("/api/runs/r1/artifacts", runview.Entries(rec))
	w := get(h, "/api/runs/nope")
	if w.Code != 404 || !strings.Contains(w.Body.String(), `"error":"no run \"nope\"`) {
		t.Errorf("unknown run: %d %s", w.Code, w.Body)
	}
}

func TestDownload(t *testing.T) {
	store, rec := fixture(t)
	h := newHandler(t, store, "")
	data := rec.Steps[0].Outputs[0]
	w := get(h, "/api/runs/r1/artifacts/make/data")
	if w.Code != 200 || w.Body.String() != "a,b\n1,2\n3,4\n" || w.Header().Get("ETag") != `"`+data.SHA256+`"` ||
		w.Header().Get("Accept-Ranges") != "bytes" || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("download: %d %v %q", w.Code, w.Header(), w.Body)
	}
	if !strings.Contains(w.Header().Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("an artifact is served without the sandbox policy")
	}
	w = get(h, "/api/runs/r1/artifacts/make/data", "Range", "bytes=4-6")
	if w.Code != http.StatusPartialContent || w.Body.String() != "1,2" || w.Header().Get("Content-Range") != "bytes 4-6/12" {
		t.Errorf("range: %d %v %q", w.Code, w.Header(), w.Body)
	}
	w = get(h, "/api/runs/r1/artifacts/make/data", "Range", "bytes=0-0,10-")
	if w.Code != http.StatusPartialContent || !strings.Contains(w.Body.String(), "4\n") || !strings.HasPrefix(w.Header().Get("Content-Type"), "multipart/byteranges") {
		t.Errorf("multi-range: %d %v %q", w.Code, w.Header(), w.Body)
	}
	w = get(h, "/api/runs/r1/artifacts/make/tree/sub/y.txt?inline=1")
	if w.Body.String() != "yy\n" || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "inline") {
		t.Errorf("file in a directory: %v %q", w.Header(), w.Body)
	}
	// A whole directory output is a tar of its files.
	w = get(h, "/api/runs/r1/artifacts/make/tree")
	tr := tar.NewReader(w.Body)
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Error(err)
			}
			break
		}
		b, _ := io.ReadAll(tr)
		names = append(names, fmt.Sprintf("%s=%q", hdr.Name, b))
	}
	if diff := cmp.Diff([]string{`tree/sub/y.txt="yy\n"`, `tree/x.txt="x\n"`}, names); diff != "" {
		t.Errorf("tar (-want +got):\n%s", diff)
	}
}

// A corrupt object never arrives whole: the server cuts the connection.
func TestDownloadCorrupt(t *testing.T) {
	store, _ := fixture(t)
	if err := os.WriteFile(filepath.Join(store.Dir(), "r1", "make", "data"), []byte("a,b\n1,2\n3,X\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(t, store, ""))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs/r1/artifacts/make/data", nil)
	req.Host = "127.0.0.1"
	resp, err := srv.Client().Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Errorf("a corrupt object downloaded without an error")
	}
}

func TestLogTail(t *testing.T) {
	store, _ := fixture(t)
	h := newHandler(t, store, "")
	w := get(h, "/api/runs/r1/logs/make")
	if w.Body.String() != "[make] one\n[make] two\n" || w.Header().Get("X-Log-Start") != "0" || w.Header().Get("X-Log-End") != "22" {
		t.Errorf("log: %v %q", w.Header(), w.Body)
	}
	w = get(h, "/api/runs/r1/logs/make?offset=11")
	if w.Body.String() != "[make] two\n" || w.Header().Get("X-Log-Start") != "11" {
		t.Errorf("log from 11: %v %q", w.Header(), w.Body)
	}
	if w = get(h, "/api/runs/r1/logs/make?offset=99"); w.Header().Get("X-Log-Start") != "0" {
		t.Errorf("an offset past the end starts over: %v", w.Header())
	}
	if w = get(h, "/api/runs/r1/logs/make?offset=-1"); w.Code != 400 {
		t.Errorf("negative offset: %d", w.Code)
	}
	if w = get(h, "/api/runs/r1/logs/use"); w.Code != 404 || !strings.Contains(w.Body.String(), "has no log yet (Skipped)") {
		t.Errorf("no log: %d %s", w.Code, w.Body)
	}
}

// While a step of a running run has no log in the store, its live log
// (a cluster step's pod) is served, from an offset too; once the store has
// the log, the store's copy is served.
func TestLiveLog(t *testing.T) {
	store, rec := fixture(t)
	rec.Status = record.StatusRunning
	rec.Steps[1].Status = record.StatusRunning
	if err := recordstore.WriteRun(t.Context(), store, rec); err != nil {
		t.Fatal(err)
	}
	pod := "epoch 1\nepoch 2\nepo"
	h, err := New(Options{Store: store, Records: storeRecords{store},
		LiveLog: func(ctx context.Context, r *record.Run, step string) ([]byte, bool, error) {
			if r.ID != "r1" || step != "use" {
				return nil, false, fmt.Errorf("live log of %s %s asked", r.ID, step)
			}
			return []byte(pod), true, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Code                     int
		Source, Start, End, Body string
	}
	ask := func(path string) answer {
		w := get(h, path)
		return answer{w.Code, w.Header().Get("X-Log-Source"), w.Header().Get("X-Log-Start"), w.Header().Get("X-Log-End"), w.Body.String()}
	}
	for _, tc := range []struct {
		path string
		want answer
	}{
		{"/api/runs/r1/logs/use", answer{200, LogFromPod, "0", "19", pod}},
		{"/api/runs/r1/logs/use?offset=8", answer{200, LogFromPod, "8", "19", "epoch 2\nepo"}},
		{"/api/runs/r1/logs/make", answer{200, LogFromStore, "0", "22", "[make] one\n[make] two\n"}},
	} {
		if diff := cmp.Diff(tc.want, ask(tc.path)); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
		}
	}
	if err := store.Put(t.Context(), record.LogKey("r1", "use"), strings.NewReader("stored\n"), -1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(answer{200, LogFromStore, "0", "7", "stored\n"}, ask("/api/runs/r1/logs/use?offset=8")); diff != "" {
		t.Errorf("GET the stored log from the pod log's offset (-want +got):\n%s", diff)
	}
}

func TestEvents(t *testing.T) {
	store, rec := fixture(t)
	rec.Status, rec.Finished = record.StatusRunning, nil
	ctx := context.Background()
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(t, store, ""))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/runs/r1/events", nil)
	req.Host = "localhost"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 64)
	n, _ := io.ReadAtLeast(resp.Body, first, 40)
	if !strings.HasPrefix(string(first[:n]), "event: run\ndata: {\"id\":\"r1\"") {
		t.Fatalf("first event: %q", first[:n])
	}
	end := time.Now()
	rec.Status, rec.Finished = record.StatusSucceeded, &end
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body) // the stream ends after "end"
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSpace(string(first[:n])+string(rest)), "\n\n")
	last := events[len(events)-1]
	if len(events) < 3 || !strings.Contains(events[len(events)-2], `"status":"Succeeded"`) || last != "event: end\ndata: {}" {
		t.Errorf("events:\n%s", bytes.Join([][]byte{first[:n], rest}, nil))
	}
}

// The pages render, with the data a person looks for.
func TestPages(t *testing.T) {
	store, _ := fixture(t)
	h := newHandler(t, store, "")
	for path, want := range map[string][]string{
		"/":               {`href="/runs/r1"`, `st-succeeded`},
		"/?status=Failed": {"No runs match"},
		"/runs/r1": {`data-node="make"`, `data-node="use"`, `class="edge st-succeeded"`, "Run params", "lr",
			"<code>v9.9.9</code>", `scheduled by <b class="schedule">nightly</b> for <time datetime="2026-01-01T02:00:00&#43;01:00">2026-01-01T02:00:00&#43;01:00</time>`, "<code>c0ffee1234</code> on <code>main</code>", "https://git.example.com/ml.git", "dirty, diff", "sha256 dddddddddddd"},
		"/runs/r1?step=use":                  {`data-input="d"`, `made by <a href="/runs/r1?step=make">r1/make/data</a>`},
		"/runs/r1?step=make":                 {`Read by <a href="/runs/r1?step=use">r1/use</a>`, `<table class="csv">`, "<th>a</th>", `code class="value">7<`, "sub/y.txt", "<dt>Code</dt>", ">abababababab</code>"},
		"/runs/r1?step=make&file=tree/x.txt": {`<b class="oname">tree<span class="muted">/x.txt`, "<pre>x\n</pre>"},
		"/runs/r1?part=live":                 {`<svg class="graph"`},
		"/compare?runs=r1":                   {`data-row="param:lr"`, `data-row="steps:use"`, `data-row="code:make"`, `data-row="origin:commit"`, "<code>c0ffee1234</code>"},
	} {
		w := get(h, path)
		if w.Code != 200 {
			t.Errorf("GET %s: %d\n%s", path, w.Code, w.Body)
			continue
		}
		for _, s := range want {
			if !strings.Contains(w.Body.String(), s) {
				t.Errorf("GET %s lacks %q", path, s)
			}
		}
	}
	if w := get(h, "/runs/nope"); w.Code != 404 || !strings.Contains(w.Body.String(), "no run &#34;nope&#34;") {
		t.Errorf("unknown run page: %d\n%s", w.Code, w.Body)
	}
	if w := get(h, "/compare"); w.Code != 400 {
		t.Errorf("compare without runs: %d", w.Code)
	}
}

// TestRunPageFinallyAfter: the run page draws a finally step, named so by
// the run's resolved pipeline, after the other steps, not in the first
// column as a step without dependencies.
func TestRunPageFinallyAfter(t *testing.T) {
	store, rec := fixture(t)
	ctx := context.Background()
	rec.Steps = append(rec.Steps, record.StepRecord{Name: "report", Status: record.StatusSucceeded})
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, store, "")
	node := regexp.MustCompile(`data-node="report"[^>]*transform="translate\((\d+) `)
	x := func() string {
		m := node.FindStringSubmatch(get(h, "/runs/r1").Body.String())
		if m == nil {
			t.Fatal("no node report on the run page")
		}
		return m[1]
	}
	if got := x(); got != "10" {
		t.Fatalf("without a resolved pipeline, report has no dependencies: x %s, want the first column", got)
	}
	res := origin.Resolved{Pipeline: "p", Steps: []*plan.Step{{Name: "make"}, {Name: "use"}, {Name: "report", Finally: true}}}
	if err := artifacts.PutJSON(ctx, store, origin.ResolvedKey("r1"), res); err != nil {
		t.Fatal(err)
	}
	if got, want := x(), strconv.Itoa(10+2*(NodeW+64)); got != want {
		t.Errorf("the finally step report: x %s, want %s (after make → use)", got, want)
	}
}

// TestRunPageRoundsNumbers: a float output value is shown rounded, the
// exact value on hover (its title).
func TestRunPageRoundsNumbers(t *testing.T) {
	store, rec := fixture(t)
	v := "0.8943409990967831"
	rec.Steps[0].Outputs = append(rec.Steps[0].Outputs, record.OutputRecord{Name: "auc", Type: "float", Value: &v})
	if err := recordstore.WriteRun(context.Background(), store, rec); err != nil {
		t.Fatal(err)
	}
	body := get(newHandler(t, store, ""), "/runs/r1?step=make").Body.String()
	if want := `<code class="value"><span class="rounded" title="0.8943409990967831">0.8943</span></code>`; !strings.Contains(body, want) {
		t.Errorf("the run page lacks %s", want)
	}
	if !strings.Contains(body, `<code class="value">7</code>`) {
		t.Error("an int output is not shown as written")
	}
}

// TestRunPageCachedNeutral: a step reused from the cache is drawn as one
// (class cached, whose style is neutral grey), not in its status's colour.
func TestRunPageCachedNeutral(t *testing.T) {
	store, rec := fixture(t)
	rec.Steps[0].Cached, rec.Steps[0].CachedFrom = true, "r0"
	if err := recordstore.WriteRun(context.Background(), store, rec); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, store, "")
	body := get(h, "/runs/r1").Body.String()
	if !strings.Contains(body, `class="node st-succeeded cached" data-node="make"`) || strings.Contains(body, `class="node st-skipped cached"`) {
		t.Errorf("the cached step make is not drawn as cached:\n%s", body)
	}
	css := get(h, "/static/style.css").Body.String()
	if !strings.Contains(css, "svg.graph .node.cached .box { fill: #f6f8fa;") {
		t.Error("style.css has no neutral style for a cached node")
	}
}
