package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components/wire"
)

const testBucket = "pipectl-test"

// newTestS3 starts a MinIO server with a bucket and returns a store at
// s3://pipectl-test/<prefix> on it.
func newTestS3(t *testing.T, prefix string, opts S3Options) (*S3, *miniotest.Server) {
	t.Helper()
	srv := startMinIO(t)
	return openTestS3(t, srv, prefix, opts), srv
}

// startMinIO starts a MinIO server with the bucket testBucket.
func startMinIO(t *testing.T) *miniotest.Server {
	t.Helper()
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(t.Context(), testBucket); err != nil {
		t.Fatal(err)
	}
	return srv
}

func openTestS3(t *testing.T, srv *miniotest.Server, prefix string, opts S3Options) *S3 {
	t.Helper()
	opts.Endpoint = srv.Endpoint
	opts.AccessKey, opts.SecretKey = srv.AccessKey, srv.SecretKey
	s, err := newS3(t.Context(), testBucket, prefix, opts, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func noEnv(string) string { return "" }

func TestResolveS3Options(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	defaults := func(c s3Config) s3Config {
		c.partSize, c.concurrency, c.maxMemory, c.reconnect = DefaultS3PartSize, DefaultS3Concurrency, 5*DefaultS3PartSize, DefaultS3ReconnectWait
		return c
	}
	tests := []struct {
		name    string
		opts    S3Options
		env     func(string) string
		want    s3Config
		wantErr string
	}{{
		name: "aws default",
		env:  noEnv,
		want: defaults(s3Config{host: "s3.amazonaws.com", secure: true, endpoint: "https://s3.amazonaws.com"}),
	}, {
		name: "host:port means TLS",
		opts: S3Options{Endpoint: "minio.example:9000", Region: "eu-1"},
		env:  noEnv,
		want: defaults(s3Config{host: "minio.example:9000", secure: true, endpoint: "https://minio.example:9000", region: "eu-1"}),
	}, {
		name: "plain http from the environment",
		env:  env("AWS_ENDPOINT_URL", "http://127.0.0.1:9000", "AWS_REGION", "r1", "AWS_DEFAULT_REGION", "r2"),
		want: defaults(s3Config{host: "127.0.0.1:9000", endpoint: "http://127.0.0.1:9000", region: "r1"}),
	}, {
		name: "S3 endpoint wins, default region",
		env:  env("AWS_ENDPOINT_URL", "http://a:1", "AWS_ENDPOINT_URL_S3", "https://b:2/", "AWS_DEFAULT_REGION", "r2"),
		want: defaults(s3Config{host: "b:2", secure: true, endpoint: "https://b:2", region: "r2"}),
	}, {
		name: "options win over the environment",
		opts: S3Options{Endpoint: "http://c:3", AccessKey: "AK", SecretKey: "SK", SessionToken: "T", PartSize: 8 << 20, Concurrency: 2, ReconnectWait: -1},
		env:  env("AWS_ENDPOINT_URL", "http://a:1", "AWS_SECRET_ACCESS_KEY", "other"),
		want: s3Config{host: "c:3", endpoint: "http://c:3", accessKey: "AK", secretKey: "SK", token: "T", partSize: 8 << 20, concurrency: 2, maxMemory: 3 * 8 << 20, reconnect: -1},
	}, {
		name: "access key flag, secret from the environment",
		opts: S3Options{Endpoint: "h", AccessKey: "AK"},
		env:  env("AWS_SECRET_ACCESS_KEY", "SK", wire.EnvS3Insecure, "true"),
		want: defaults(s3Config{host: "h", secure: true, endpoint: "https://h", accessKey: "AK", secretKey: "SK", insecure: true}),
	}, {
		name:    "access key without secret",
		opts:    S3Options{AccessKey: "AK"},
		env:     noEnv,
		wantErr: "no secret key",
	}, {
		name:    "endpoint with a path",
		opts:    S3Options{Endpoint: "http://h:1/bucket"},
		env:     noEnv,
		wantErr: "only a scheme, host and port",
	}, {
		name:    "unknown scheme",
		opts:    S3Options{Endpoint: "ftp://h"},
		env:     noEnv,
		wantErr: "want host[:port]",
	}, {
		name:    "tiny parts",
		opts:    S3Options{PartSize: 1 << 20},
		env:     noEnv,
		wantErr: "minimum of 5 MiB",
	}, {
		name:    "bad insecure",
		env:     env(wire.EnvS3Insecure, "maybe"),
		wantErr: wire.EnvS3Insecure,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveS3Options(tt.opts, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(s3Config{})); diff != "" {
				t.Errorf("resolveS3Options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreContract runs one table of Store operations against every kind
// of store.
func TestStoreContract(t *testing.T) {
	stores := map[string]func(t *testing.T) Store{
		"local": func(t *testing.T) Store {
			s, err := NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"s3": func(t *testing.T) Store { s, _ := newTestS3(t, "team/a", S3Options{}); return s },
		"s3-bucket-root": func(t *testing.T) Store {
			s, _ := newTestS3(t, "", S3Options{})
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testStoreContract(t, open(t))
		})
	}
}

func testStoreContract(t *testing.T, s Store) {
	ctx := t.Context()
	put := func(key, data string, size int64) {
		t.Helper()
		if err := s.Put(ctx, key, strings.NewReader(data), size); err != nil {
			t.Fatalf("Put(%s): %v", key, err)
		}
	}
	objects := map[string]string{
		"r1/run.json":                   `{"id":"r1"}`,
		"r1/train/model":                "weights",
		"r1/train/model.meta.json":      "{}",
		"r1/prep/data/a.txt":            "a",
		"r1/prep/data/sub/b.txt":        "bb",
		"r1/prep/data.meta.json":        "{}",
		"r1/prep/step.log":              "log",
		"r2/run.json":                   `{"id":"r2"}`,
		".cache/0123456789abcdef0.json": "{}",
	}
	for k, v := range objects {
		size := int64(len(v))
		if strings.HasSuffix(k, ".log") {
			size = -1 // unknown size is allowed
		}
		put(k, v, size)
	}
	put("r1/train/model", "new weights", -1) // overwrite

	read := func(key string) (string, error) {
		r, err := s.Get(ctx, key)
		if err != nil {
			return "", err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		return string(b), err
	}
	if got, err := read("r1/train/model"); err != nil || got != "new weights" {
		t.Errorf("Get(r1/train/model) = %q, %v", got, err)
	}
	if got, err := read("r1/prep/data/sub/b.txt"); err != nil || got != "bb" {
		t.Errorf("Get(r1/prep/data/sub/b.txt) = %q, %v", got, err)
	}
	for _, key := range []string{"r1/missing", "r1/prep/data", "nope/x"} {
		if _, err := read(key); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%s) = %v, want ErrNotFound", key, err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("Stat(%s) = %v, want ErrNotFound", key, err)
		}
	}
	info, err := s.Stat(ctx, "r1/train/model")
	if err != nil || info.Key != "r1/train/model" || info.Size != int64(len("new weights")) || info.Modified.IsZero() {
		t.Errorf("Stat(r1/train/model) = %+v, %v", info, err)
	}
	if time.Since(info.Modified) > time.Hour || time.Until(info.Modified) > time.Hour {
		t.Errorf("Stat(r1/train/model).Modified = %v, want about now", info.Modified)
	}

	for _, key := range []string{"", "/abs", "a/../b", "a//b", `a\b`, "."} {
		if err := s.Put(ctx, key, strings.NewReader("x"), 1); err == nil {
			t.Errorf("Put(%q) succeeded, want an invalid key error", key)
		}
	}
	if err := s.Put(ctx, "r1/short", strings.NewReader("abc"), 5); err == nil {
		t.Error("Put of 3 bytes declared as 5 succeeded")
	}
	if err := s.Put(ctx, "r1/long", strings.NewReader("abcdef"), 5); err == nil {
		t.Error("Put of 6 bytes declared as 5 succeeded")
	}
	for _, key := range []string{"r1/short", "r1/long"} {
		if _, err := s.Stat(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("after a failed Put, Stat(%s) = %v, want ErrNotFound", key, err)
		}
	}

	list := func(prefix string, recursive bool) []entry {
		t.Helper()
		infos, err := s.List(ctx, prefix, recursive)
		if err != nil {
			t.Fatalf("List(%q, %v): %v", prefix, recursive, err)
		}
		var out []entry
		for _, i := range infos {
			out = append(out, entry{i.Key, i.Size, i.Dir})
		}
		return out
	}
	lists := []struct {
		prefix    string
		recursive bool
		want      []entry
	}{
		{"", false, []entry{{".cache/", 0, true}, {"r1/", 0, true}, {"r2/", 0, true}}},
		{"r1/", false, []entry{{"r1/prep/", 0, true}, {"r1/run.json", 11, false}, {"r1/train/", 0, true}}},
		{"r1/train/", false, []entry{{"r1/train/model", 11, false}, {"r1/train/model.meta.json", 2, false}}},
		{"r1/prep/", false, []entry{{"r1/prep/data.meta.json", 2, false}, {"r1/prep/data/", 0, true}, {"r1/prep/step.log", 3, false}}},
		{"r1/prep/da", false, []entry{{"r1/prep/data.meta.json", 2, false}, {"r1/prep/data/", 0, true}}},
		{"r1/prep/data/", true, []entry{{"r1/prep/data/a.txt", 1, false}, {"r1/prep/data/sub/b.txt", 2, false}}},
		{"r1/prep/", true, []entry{{"r1/prep/data.meta.json", 2, false}, {"r1/prep/data/a.txt", 1, false}, {"r1/prep/data/sub/b.txt", 2, false}, {"r1/prep/step.log", 3, false}}},
		{"r2", true, []entry{{"r2/run.json", 11, false}}},
		{"r3/", true, nil},
		{"r3/", false, nil},
	}
	for _, l := range lists {
		// Store.List promises key order.
		if diff := cmp.Diff(l.want, list(l.prefix, l.recursive)); diff != "" {
			t.Errorf("List(%q, %v) (-want +got):\n%s", l.prefix, l.recursive, diff)
		}
	}
	if got := len(list("", true)); got != len(objects) {
		t.Errorf("List(\"\", true) has %d entries, want %d", got, len(objects))
	}

	if err := s.Delete(ctx, "r1/train/model"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "r1/train/model"); err != nil {
		t.Errorf("Delete of a missing object: %v", err)
	}
	if _, err := s.Stat(ctx, "r1/train/model"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after Delete, Stat = %v, want ErrNotFound", err)
	}
	if !strings.HasPrefix(s.URI("r1/run.json"), s.Root()+"/") {
		t.Errorf("URI %s is not below Root %s", s.URI("r1/run.json"), s.Root())
	}
	if key, err := SplitURI(s, s.URI("r1/run.json")); err != nil || key != "r1/run.json" {
		t.Errorf("SplitURI(URI(r1/run.json)) = %q, %v", key, err)
	}
}

// entry is the part of an ObjectInfo the contract fixes.
type entry struct {
	Key  string
	Size int64
	Dir  bool
}

func TestOpenS3(t *testing.T) {
	srv := startMinIO(t)
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "")
	s, err := Open(t.Context(), "s3://"+testBucket+"/team/x/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Root(), "s3://"+testBucket+"/team/x"; got != want {
		t.Errorf("Root() = %s, want %s", got, want)
	}
	if err := s.Put(t.Context(), "r/run.json", strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().StatObject(t.Context(), testBucket, "team/x/r/run.json", minio.StatObjectOptions{}); err != nil {
		t.Errorf("the object is not at its browsable name: %v", err)
	}
}

func TestS3PublishFetch(t *testing.T) {
	s, srv := newTestS3(t, "p", S3Options{PartSize: 5 << 20, Concurrency: 3})
	ctx := t.Context()
	dir := t.TempDir()

	// A file of several parts whose size is not a multiple of the part size.
	file := filepath.Join(dir, "model.bin")
	writeRandom(t, file, 17<<20+12345)
	// A directory output with nested files, an empty one and a multipart one.
	out := filepath.Join(dir, "data")
	files := map[string]int64{"a.txt": 10, "sub/b.bin": 100 << 10, "sub/deeper/empty": 0, "big.bin": 11 << 20}
	for name, size := range files {
		writeRandom(t, filepath.Join(out, filepath.FromSlash(name)), size)
	}

	fm, err := Publish(ctx, s, testKey("r1", "train", "model"), file, Metadata{Type: "Model", Producer: Producer{Run: "r1", Step: "train", Output: "model"}})
	if err != nil {
		t.Fatal(err)
	}
	if fm.Kind != KindFile || fm.Size != 17<<20+12345 || fm.SHA256 != fileSum(t, file) {
		t.Errorf("Publish(file) = %+v", fm)
	}
	dm, err := Publish(ctx, s, testKey("r1", "prep", "data"), out, Metadata{Type: "Dataset"})
	if err != nil {
		t.Fatal(err)
	}
	if dm.Kind != KindDirectory || len(dm.Files) != len(files) {
		t.Errorf("Publish(dir) = %+v", dm)
	}

	// People browse real files at real names.
	c := srv.Client()
	for _, name := range []string{"p/r1/train/model", "p/r1/train/model.meta.json", "p/r1/prep/data/a.txt", "p/r1/prep/data/sub/deeper/empty", "p/r1/prep/data.meta.json"} {
		if _, err := c.StatObject(ctx, testBucket, name, minio.StatObjectOptions{}); err != nil {
			t.Errorf("object %s: %v", name, err)
		}
	}
	info, err := c.StatObject(ctx, testBucket, "p/r1/train/model.meta.json", minio.StatObjectOptions{})
	if err == nil && info.ContentType != "application/json" {
		t.Errorf("metadata content type = %q, want application/json", info.ContentType)
	}

	got := filepath.Join(t.TempDir(), "fetched", "model.bin")
	if _, err := Fetch(ctx, s, testKey("r1", "train", "model"), got, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if fileSum(t, got) != fm.SHA256 {
		t.Error("fetched file differs")
	}
	gotDir := filepath.Join(t.TempDir(), "data")
	if _, err := Fetch(ctx, s, testKey("r1", "prep", "data"), gotDir, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, size := range files {
		p := filepath.Join(gotDir, filepath.FromSlash(name))
		st, err := os.Stat(p)
		if err != nil || st.Size() != size || fileSum(t, p) != fileSum(t, filepath.Join(out, filepath.FromSlash(name))) {
			t.Errorf("fetched %s: %v", name, err)
		}
	}
}

// TestS3PutStream covers multipart uploads from a plain reader, of known
// and unknown size, and that a failed one leaves neither an object nor an
// incomplete upload behind.
func TestS3PutStream(t *testing.T) {
	s, srv := newTestS3(t, "", S3Options{PartSize: 5 << 20, Concurrency: 2, MaxMemory: 12 << 20})
	ctx := t.Context()
	data := make([]byte, 12<<20+3)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	for _, size := range []int64{int64(len(data)), -1} {
		if err := s.Put(ctx, "r/s/o", bytes.NewBuffer(data), size); err != nil {
			t.Fatalf("Put(size %d): %v", size, err)
		}
		r, err := s.Get(ctx, "r/s/o")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("Put(size %d) then Get: %d bytes, %v", size, len(got), err)
		}
	}
	// Exactly two parts, then the end of the reader.
	if err := s.Put(ctx, "r/s/even", bytes.NewBuffer(data[:10<<20]), -1); err != nil {
		t.Fatal(err)
	}
	if info, err := s.Stat(ctx, "r/s/even"); err != nil || info.Size != 10<<20 {
		t.Errorf("Stat(r/s/even) = %+v, %v", info, err)
	}

	err := s.Put(ctx, "r/s/short", bytes.NewBuffer(data), int64(len(data))+1)
	if err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Errorf("Put of fewer bytes than declared = %v, want an error saying the upload was aborted", err)
	}
	if _, err := s.Stat(ctx, "r/s/short"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a failed multipart upload Stat = %v, want ErrNotFound", err)
	}
	for u := range srv.Client().ListIncompleteUploads(ctx, testBucket, "r/", true) {
		t.Errorf("incomplete upload left behind: %+v", u)
	}
}

// TestS3CorruptObject overwrites an object behind pipectl's back.
func TestS3CorruptObject(t *testing.T) {
	s, srv := newTestS3(t, "", S3Options{})
	ctx := t.Context()
	// A small file, written through the page cache, and one large enough
	// for direct I/O whose size is not a multiple of its alignment.
	for _, size := range []int{1 << 20, directMinSize + 5} {
		file := filepath.Join(t.TempDir(), "m")
		writeRandom(t, file, int64(size))
		key := testKey("r1", "train", fmt.Sprintf("model-%d", size))
		if _, err := Publish(ctx, s, key, file, Metadata{Type: "Model"}); err != nil {
			t.Fatal(err)
		}
		bad := bytes.Repeat([]byte{'x'}, size)
		if _, err := srv.Client().PutObject(ctx, testBucket, key, bytes.NewReader(bad), int64(len(bad)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		dest := filepath.Join(dir, "m")
		_, err := Fetch(ctx, s, key, dest, FetchOptions{})
		var ce *ChecksumError
		if !errors.As(err, &ce) {
			t.Fatalf("size %d: Fetch of a corrupt object = %v, want a *ChecksumError", size, err)
		}
		if ce.URI != s.URI(key) {
			t.Errorf("ChecksumError.URI = %s, want %s", ce.URI, s.URI(key))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("size %d: a corrupt download left %v in %s", size, entries, dir)
		}
	}
}

// TestS3KilledMidUpload kills MinIO in the middle of a multipart upload:
// once the reconnect wait is over, the upload fails and leaves nothing.
func TestS3KilledMidUpload(t *testing.T) {
	s, srv := newTestS3(t, "", S3Options{PartSize: 5 << 20, Concurrency: 2, MaxRetries: 2, ReconnectWait: 2 * time.Second})
	file := filepath.Join(t.TempDir(), "model")
	writeRandom(t, file, 96<<20)
	key := testKey("r1", "train", "model")

	var once sync.Once
	killer := progressFunc(func(moved int64) {
		if moved > 30<<20 {
			once.Do(srv.Kill)
		}
	})
	ctx, cancel := context.WithTimeout(WithProgress(t.Context(), killer), time.Minute)
	defer cancel()
	_, err := Publish(ctx, s, key, file, Metadata{Type: "Model"})
	if err == nil {
		t.Fatal("Publish succeeded while MinIO was killed")
	}
	t.Logf("error: %v", err)
	if msg := err.Error(); !strings.Contains(msg, srv.Endpoint) || !strings.Contains(msg, s.URI(key)) {
		t.Errorf("error %q names neither the endpoint %s nor the object", msg, srv.Endpoint)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetadata(t.Context(), s, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a failed upload ReadMetadata = %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(t.Context(), key); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a failed upload the data object exists (%v)", err)
	}
	m, err := Publish(t.Context(), s, key, file, Metadata{Type: "Model"})
	if err != nil {
		t.Fatalf("rerun after restart: %v", err)
	}
	got := filepath.Join(t.TempDir(), "got")
	if _, err := Fetch(t.Context(), s, key, got, FetchOptions{}); err != nil || fileSum(t, got) != m.SHA256 {
		t.Errorf("Fetch after rerun: %v", err)
	}
}

// TestS3RestartedMidUpload kills MinIO in the middle of a multipart upload
// and starts it again 8 s later, longer than minio-go's own retries last
// (at most 7.4 s, about 4 s on average): the store waits for the server and
// the upload completes.
func TestS3RestartedMidUpload(t *testing.T) {
	s, srv := newTestS3(t, "", S3Options{PartSize: 5 << 20, Concurrency: 2})
	file := filepath.Join(t.TempDir(), "model")
	writeRandom(t, file, 48<<20)
	key := testKey("r1", "train", "model")

	var once sync.Once
	var restartErr error
	restarted := make(chan struct{})
	killer := progressFunc(func(moved int64) {
		if moved > 12<<20 {
			once.Do(func() {
				srv.Kill()
				time.AfterFunc(8*time.Second, func() { restartErr = srv.Restart(); close(restarted) })
				t.Cleanup(func() { <-restarted }) // before miniotest's Kill
			})
		}
	})
	ctx, cancel := context.WithTimeout(WithProgress(t.Context(), killer), 3*time.Minute)
	defer cancel()
	m, err := Publish(ctx, s, key, file, Metadata{Type: "Model"})
	if err != nil {
		t.Fatalf("Publish across a MinIO restart: %v", err)
	}
	<-restarted
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if m.SHA256 != fileSum(t, file) {
		t.Errorf("metadata sha256 %s, want the file's", m.SHA256)
	}
	got := filepath.Join(t.TempDir(), "got")
	if _, err := Fetch(t.Context(), s, key, got, FetchOptions{}); err != nil || fileSum(t, got) != m.SHA256 {
		t.Errorf("Fetch after the restart: %v", err)
	}
}

func TestS3WrongCredentials(t *testing.T) {
	srv := startMinIO(t)
	secret := "wrong-" + srv.SecretKey[len(srv.SecretKey)/2:] + "-Zq9"
	for _, opts := range []S3Options{
		{AccessKey: srv.AccessKey, SecretKey: secret},
		{AccessKey: "nobody", SecretKey: secret},
	} {
		opts.Endpoint = srv.Endpoint
		_, err := newS3(t.Context(), testBucket, "x", opts, noEnv)
		if err == nil {
			t.Fatal("NewS3 with wrong credentials succeeded")
		}
		msg := err.Error()
		t.Logf("error: %v", msg)
		if !strings.Contains(msg, srv.Endpoint) {
			t.Errorf("error %q does not name the endpoint %s", msg, srv.Endpoint)
		}
		if strings.Contains(msg, secret) || strings.Contains(fmt.Sprintf("%#v", err), secret) {
			t.Errorf("error %q shows the secret key", msg)
		}
		var ae *S3AccessError
		if !errors.As(err, &ae) {
			t.Errorf("error %T is no *S3AccessError", err)
		}
	}
	// The same through the environment, as the CLI does.
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	_, err := Open(t.Context(), "s3://"+testBucket, Options{})
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), srv.Endpoint) {
		t.Errorf("Open with wrong credentials from the environment: %v", err)
	}
}

func TestS3MissingBucket(t *testing.T) {
	srv := miniotest.Start(t)
	_, err := newS3(t.Context(), "no-such-bucket", "p", S3Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}, noEnv)
	if err == nil {
		t.Fatal("NewS3 of a missing bucket succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, `bucket "no-such-bucket" does not exist`) || !strings.Contains(msg, srv.Endpoint) {
		t.Errorf("error %q does not name the bucket and the endpoint", msg)
	}
}

// TestS3LargeUpload moves 1 GiB of generated data through the store, of
// unknown size, and checks that memory stays bounded both ways.
func TestS3LargeUpload(t *testing.T) {
	if testing.Short() {
		t.Log("-short: 64 MiB instead of 1 GiB")
	}
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	s, _ := newTestS3(t, "big", S3Options{})
	ctx := t.Context()
	const bound = 256 << 20

	peak := watchHeap(t)
	gen := newGenerator(size)
	start := time.Now()
	if err := s.Put(ctx, "r1/train/model", gen, -1); err != nil {
		t.Fatal(err)
	}
	up := time.Since(start)
	heapUp := peak()
	info, err := s.Stat(ctx, "r1/train/model")
	if err != nil || info.Size != size {
		t.Fatalf("Stat = %+v, %v; want %d bytes", info, err, size)
	}

	peak = watchHeap(t)
	start = time.Now()
	if err := Copy(ctx, s, "r1/train/model", io.Discard, gen.sum()); err != nil {
		t.Fatal(err)
	}
	down := time.Since(start)
	heapDown := peak()
	mb := float64(size) / 1e6
	t.Logf("upload %.1fs (%.0f MB/s), peak heap in use %d MiB; download %.1fs (%.0f MB/s), peak heap in use %d MiB",
		up.Seconds(), mb/up.Seconds(), heapUp>>20, down.Seconds(), mb/down.Seconds(), heapDown>>20)
	if heapUp > bound || heapDown > bound {
		t.Errorf("peak heap in use %d MiB up, %d MiB down; want under %d MiB", heapUp>>20, heapDown>>20, bound>>20)
	}
}

// watchHeap samples runtime.MemStats.HeapInuse until the returned function
// is called, which returns the peak.
func watchHeap(t *testing.T) func() uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	finish := func() uint64 {
		once.Do(func() { close(stop); <-done })
		return peak.Load()
	}
	t.Cleanup(func() { finish() })
	return finish
}

// generator yields size bytes of incompressible data made on the fly, and
// their sha256.
type generator struct {
	block []byte
	left  int64
	off   int
	h     io.Writer
	sumOf func() string
}

func newGenerator(size int64) *generator {
	r := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20+7) // not a power of two, so parts differ
	for i := range block {
		block[i] = byte(r.Uint32())
	}
	h := sha256.New()
	return &generator{block: block, left: size, h: h, sumOf: func() string { return hex.EncodeToString(h.Sum(nil)) }}
}

func (g *generator) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(int64(len(p)), g.left)], g.block[g.off:])
	g.off = (g.off + n) % len(g.block)
	g.left -= int64(n)
	g.h.Write(p[:n])
	return n, nil
}

func (g *generator) sum() string { return g.sumOf() }

// progressFunc is a Progress that calls f with the bytes moved so far.
type progressFunc func(moved int64)

func (f progressFunc) Start(string, int64) Tracker { return &funcTracker{f: f} }

type funcTracker struct {
	f     progressFunc
	moved atomic.Int64
}

func (t *funcTracker) Add(n int64) { t.f(t.moved.Add(n)) }
func (t *funcTracker) Done(error)  {}

func writeRandom(t *testing.T, p string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(uint64(size), uint64(len(p))))
	buf := make([]byte, 64<<10)
	for size > 0 {
		for i := 0; i < len(buf); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
		}
		n := min(int64(len(buf)), size)
		if _, err := f.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
		size -= n
	}
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// testKey is the key of a step's output, as runs lay them out.
func testKey(run, step, output string) string { return run + "/" + step + "/" + output }
