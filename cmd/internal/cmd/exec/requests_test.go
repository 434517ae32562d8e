package exec

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// s3Requests is a proxy in front of a MinIO that counts the requests
// passing through it, by kind (GET, HEAD, PUT, DELETE, POST, and LIST for a
// GET of a bucket with a list query), each delayed by latency (a store
// farther away than this machine's).
type s3Requests struct {
	mu     sync.Mutex
	counts map[string]int
	lines  []string
	// inFlight is the number of requests in the proxy, most the most at once.
	inFlight, most int
}

// storeLatency is the time the proxy adds to each request.
const storeLatency = 100 * time.Millisecond

func countS3Requests(t testing.TB, endpoint string) (*s3Requests, string) {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &s3Requests{counts: map[string]int{}}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the request is signed for the proxy's host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := r.Method
		if q := r.URL.Query(); r.Method == http.MethodGet && (q.Has("list-type") || q.Has("prefix") || q.Has("delimiter")) {
			kind = "LIST"
		}
		c.mu.Lock()
		c.counts[kind]++
		c.inFlight++
		c.most = max(c.most, c.inFlight)
		c.lines = append(c.lines, time.Now().Format("15:04:05.000")+" "+kind+" "+r.URL.Path+" "+r.URL.RawQuery)
		c.mu.Unlock()
		time.Sleep(storeLatency)
		proxy.ServeHTTP(w, r)
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// take returns the counts so far, the total and the most requests at
// once, and starts again.
func (c *s3Requests) take() (map[string]int, int, []string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	got, lines, n, most := c.counts, c.lines, 0, c.most
	for _, v := range got {
		n += v
	}
	c.counts, c.lines, c.most = map[string]int{}, nil, 0
	return got, n, lines, most
}

// execOnMinIO runs, behind a counting proxy, a step pod's exec against a
// real MinIO: a step whose code is a shipped pack, with an input artifact
// from an upstream step and an output artifact and parameter, as a chain
// step of a pipeline that ships code does. It returns a function running
// the step as run RUN.
func execOnMinIO(t *testing.T, cache string) (*s3Requests, func(run string) (time.Duration, error)) {
	srv := miniotest.Start(t)
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, "pods"); err != nil {
		t.Fatal(err)
	}
	requests, endpoint := countS3Requests(t, srv.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	root := "s3://pods/runs"
	store, err := artifacts.Open(ctx, root, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code := t.TempDir()
	if err := os.WriteFile(filepath.Join(code, "step.sh"), []byte(`cp "$1" "$2"; printf 1 > "$3"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pack, _, err := codepack.Ship(ctx, store, code, codepack.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := wire.Encode(&components.Program{
		Version: components.ProgramVersion, Name: "copy", Code: pack.Digest,
		Inputs:  []components.ProgramIO{{Name: "rows", Type: "Dataset"}},
		Outputs: []components.ProgramIO{{Name: "copy", Type: "Dataset"}, {Name: "n", Type: "int"}},
		Command: []string{"sh", "step.sh", "{{inputs.rows.path}}", "{{outputs.copy.path}}", "{{outputs.n.path}}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	step := stepSpec(t, plan.Wiring{Step: "copy", Inputs: map[string]plan.OutputRef{"rows": {Step: "prep", Output: "rows"}}})
	return requests, func(run string) (time.Duration, error) {
		// Each run's input is its own: with the cache on, the step runs.
		src := filepath.Join(t.TempDir(), "rows.csv")
		if err := os.WriteFile(src, []byte("x\n"+run+"\n"), 0o644); err != nil {
			return 0, err
		}
		key := record.OutputKey(run, "prep", "rows")
		meta, err := artifacts.Publish(ctx, store, key, src, artifacts.Metadata{Type: components.TypeDataset})
		if err == nil {
			err = recordstore.WriteOutputs(ctx, store, run, "prep", []record.OutputRecord{{Name: "rows", Type: components.TypeDataset, URI: store.URI(key), Size: meta.Size, SHA256: meta.SHA256}})
		}
		if err != nil {
			return 0, err
		}
		requests.take() // the producer's
		began := time.Now()
		_, stderr, err := runExec(t, root, nil, "--run="+run, "--component="+comp, "--step="+step, "--cache="+cache,
			"--output-params="+filepath.Join(t.TempDir(), "outputs"), "--work="+t.TempDir())
		if err != nil {
			return 0, fmt.Errorf("%v\n%s", err, stderr)
		}
		return time.Since(began), nil
	}
}

// A step pod's exec with one input artifact, a shipped code pack and two
// outputs: the store requests it makes and its time with each request
// delayed by storeLatency (printed with -v), none of them a LIST of what a
// key names, some of them at once.
func TestExecStoreRequests(t *testing.T) {
	for _, cache := range []string{"off", "on"} {
		t.Run("cache="+cache, func(t *testing.T) {
			requests, run := execOnMinIO(t, cache)
			// The fastest of 3 runs: this machine's other work stays out.
			var took time.Duration
			var counts map[string]int
			var n int
			var lines []string
			var most int
			for i := range 3 {
				d, err := run(fmt.Sprint("run-", i))
				if err != nil {
					t.Fatal(err)
				}
				if took == 0 || d < took {
					took = d
				}
				counts, n, lines, most = requests.take()
			}
			// The time of the requests one after the other, with none at once.
			t.Logf("%d requests %v (%s of them one after the other), up to %d at once, exec took %s:\n%s", n, counts, time.Duration(n)*storeLatency, most, took.Round(time.Millisecond), strings.Join(lines, "\n"))
			// The code pack and the input are fetched at once, the
			// inputs record and the lineage index (and the cache entry)
			// written at once.
			if most < 2 {
				t.Errorf("exec made its store requests one at a time:\n%s", strings.Join(lines, "\n"))
			}
			if counts["LIST"] > 0 {
				t.Errorf("exec listed the store %d time(s):\n%s", counts["LIST"], strings.Join(slices.DeleteFunc(lines, func(l string) bool { return !strings.Contains(l, " LIST ") }), "\n"))
			}
		})
	}
}

// A step pod told its store's region (AWS_REGION, which pipectl run --on
// argo and compile give the pods) asks the store for no bucket location:
// one request fewer than TestExecStoreRequests' first.
func TestExecKnownRegionAsksNoLocation(t *testing.T) {
	requests, run := execOnMinIO(t, "off")
	for _, region := range []string{"", "us-east-1"} {
		t.Setenv("AWS_REGION", region)
		if _, err := run("run-" + cmp.Or(region, "none")); err != nil {
			t.Fatal(err)
		}
		_, n, lines, _ := requests.take()
		asked := slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " location=") })
		if asked != (region == "") {
			t.Errorf("AWS_REGION=%q: exec asked for the bucket location: %v, want %v (%d requests):\n%s", region, asked, region == "", n, strings.Join(lines, "\n"))
		}
		t.Logf("AWS_REGION=%q: %d requests", region, n)
	}
}
