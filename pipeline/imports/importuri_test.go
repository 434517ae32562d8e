package imports

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
)

// TestImport imports gs:// objects, read through a real S3 server (MinIO
// acting as Cloud Storage's XML API), into a local and an S3 store: a file
// and a directory, each content addressed with its sha256, the same
// content imported again kept; missing configuration and a missing object
// are errors naming the URI.
func TestImport(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(ctx, "gcs-bucket"); err != nil {
		t.Fatal(err)
	}
	put := func(key, text string) {
		t.Helper()
		if _, err := srv.Client().PutObject(ctx, "gcs-bucket", key, strings.NewReader(text), int64(len(text)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("data/shakespeare1.txt", "to be $(x) `y`\n")
	put("model/a.txt", "a\n")
	put("model/sub/b.txt", "b\n")
	env := map[string]string{wire.EnvGSEndpoint: srv.Endpoint, wire.EnvGSAccessKey: srv.AccessKey, wire.EnvGSSecretKey: srv.SecretKey}
	o := ImportOptions{Getenv: func(k string) string { return env[k] }, TempDir: t.TempDir()}
	stores := map[string]artifacts.Store{"local": mustLocal(t), "s3": openTestS3(t, srv, "runs")}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			uri, meta, err := Import(ctx, s, "gs://gcs-bucket/data/shakespeare1.txt", "Dataset", o)
			if err != nil {
				t.Fatal(err)
			}
			if want := s.URI(ImportKey(meta.SHA256)); uri != want || meta.Kind != artifacts.KindFile || meta.Type != "Dataset" || meta.Source != "gs://gcs-bucket/data/shakespeare1.txt" || meta.Size != 15 {
				t.Errorf("Import = %s, %+v; want %s, a 15-byte Dataset file from its URI", uri, meta, want)
			}
			var b bytes.Buffer
			if err := artifacts.Copy(ctx, s, ImportKey(meta.SHA256), &b, meta.SHA256); err != nil || b.String() != "to be $(x) `y`\n" {
				t.Errorf("imported file holds %q, %v", b.String(), err)
			}
			again, meta2, err := Import(ctx, s, "gs://gcs-bucket/data/shakespeare1.txt", "Dataset", o)
			if err != nil || again != uri || !meta2.Created.Equal(meta.Created) {
				t.Errorf("imported again: %s %v (created %s, first %s); want the first artifact kept", again, err, meta2.Created, meta.Created)
			}
			dir, dmeta, err := Import(ctx, s, "gs://gcs-bucket/model/", "Model", o)
			if err != nil {
				t.Fatal(err)
			}
			if dmeta.Kind != artifacts.KindDirectory || len(dmeta.Files) != 2 || dmeta.Files[1].Path != "sub/b.txt" || dir != s.URI(ImportKey(dmeta.SHA256)) {
				t.Errorf("directory import = %s, %+v", dir, dmeta)
			}
			dest := t.TempDir() + "/model"
			if _, err := artifacts.Fetch(ctx, s, ImportKey(dmeta.SHA256), dest, artifacts.FetchOptions{}); err != nil {
				t.Errorf("fetch the imported directory: %v", err)
			}
		})
	}
	s := stores["local"]
	if _, _, err := Import(ctx, s, "gs://gcs-bucket/data/none.txt", "Dataset", o); err == nil || !strings.Contains(err.Error(), "import gs://gcs-bucket/data/none.txt: no object data/none.txt, and none below data/none.txt/") {
		t.Errorf("a missing object: %v", err)
	}
	delete(env, wire.EnvGSSecretKey)
	err := CheckImportConfig("gs://gcs-bucket/data/shakespeare1.txt", o)
	if err == nil || !strings.Contains(err.Error(), "import gs://gcs-bucket/data/shakespeare1.txt: set PIPECTL_GS_ENDPOINT, PIPECTL_GS_ACCESS_KEY_ID, PIPECTL_GS_SECRET_ACCESS_KEY") || !strings.HasSuffix(err.Error(), "PIPECTL_GS_SECRET_ACCESS_KEY not set") {
		t.Errorf("missing configuration: %v", err)
	}
	if _, _, err := Import(ctx, s, "gs://gcs-bucket/data/shakespeare1.txt", "Dataset", o); err == nil || !strings.Contains(err.Error(), "PIPECTL_GS_SECRET_ACCESS_KEY not set") {
		t.Errorf("Import without configuration: %v", err)
	}
	for _, bad := range []string{"gs://bucket", "gs:///key", "http://x/y", " gs://b/k", "oci://", "oci://r/m:1 x"} {
		if uris.CheckImportURI(bad) == nil {
			t.Errorf("uris.CheckImportURI(%q) = nil, want an error", bad)
		}
	}
	for _, good := range []string{"gs://b/k", "s3://b/k/", "oci://r/m:1"} {
		if err := uris.CheckImportURI(good); err != nil {
			t.Errorf("uris.CheckImportURI(%q) = %v", good, err)
		}
	}
}

func mustLocal(t *testing.T) artifacts.Store {
	t.Helper()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openTestS3 makes a bucket in srv and returns the S3 store at prefix in
// it.
func openTestS3(t *testing.T, srv *miniotest.Server, prefix string) artifacts.Store {
	t.Helper()
	const bucket = "pipectl-test"
	if err := srv.MakeBucket(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	s, err := artifacts.NewS3(t.Context(), bucket, prefix, artifacts.S3Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
