package ui

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// On an S3 store (a real MinIO) the UI serves the same pages, API and
// ranged downloads, and no answer carries the store's credentials or a
// presigned URL.
func TestS3Store(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(ctx, "runs"); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(ctx, "s3://runs/team", artifacts.Options{S3: artifacts.S3Options{
		Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	mustWrite(t, src+"/metrics.json", `{"accuracy": 0.75}`)
	mustWrite(t, src+"/big.txt", strings.Repeat("0123456789", 1000))
	rec := &record.Run{ID: "s3run", Pipeline: "p", Status: record.StatusSucceeded, Started: time.Unix(1, 0).UTC(), Params: map[string]string{"lr": "1"}}
	st := record.StepRecord{Name: "eval", Status: record.StatusSucceeded}
	for _, o := range []struct{ name, file, typ string }{{"metrics", "metrics.json", "Metrics"}, {"text", "big.txt", "Artifact"}} {
		key := record.OutputKey(rec.ID, st.Name, o.name)
		meta, err := artifacts.Publish(ctx, store, key, src+"/"+o.file, artifacts.Metadata{Type: o.typ})
		if err != nil {
			t.Fatal(err)
		}
		st.Outputs = append(st.Outputs, record.OutputRecord{Name: o.name, Type: o.typ, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256})
	}
	rec.Steps = []record.StepRecord{st}
	if err := recordstore.WriteRun(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, record.LogKey(rec.ID, "eval"), strings.NewReader("[eval] ok\n"), -1); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, store, "")
	cases := []struct {
		path, header, value string
		code                int
		want                string
	}{
		{"/", "", "", 200, `href="/runs/s3run"`},
		{"/runs/s3run?step=eval", "", "", 200, `<tr data-metric="accuracy"><th>accuracy</th><td class="num">0.75</td>`},
		{"/api/runs/s3run/artifacts", "", "", 200, `"uri": "s3://runs/team/s3run/eval/metrics"`},
		{"/api/runs/s3run/artifacts/eval/text", "Range", "bytes=9995-", 206, "56789"},
		{"/api/runs/s3run/artifacts/eval/text", "Range", "bytes=10-12", 206, "012"},
		{"/api/runs/s3run/artifacts/eval/metrics", "", "", 200, `{"accuracy": 0.75}`},
		{"/api/runs/s3run/logs/eval?offset=7", "", "", 200, "ok\n"},
		{"/compare?runs=s3run", "", "", 200, "0.75"},
		{"/api/runs/s3run/artifacts/eval/..%2F..%2F..%2Fother", "", "", 404, "error"},
	}
	for _, c := range cases {
		var hdr []string
		if c.header != "" {
			hdr = []string{c.header, c.value}
		}
		w := get(h, c.path, hdr...)
		body := w.Body.String()
		if w.Code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, want %d with %q:\n%.500s", c.path, w.Code, c.code, c.want, body)
		}
		all := body + fmtHeader(w.Header())
		for _, s := range []string{srv.SecretKey, srv.AccessKey, "X-Amz-", srv.Endpoint} {
			if strings.Contains(all, s) {
				t.Errorf("GET %s: the answer contains %q", c.path, s)
			}
		}
	}
}

func fmtHeader(h http.Header) string {
	var b strings.Builder
	for k, vs := range h {
		b.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
	}
	return b.String()
}
