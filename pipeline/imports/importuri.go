package imports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
)

// Importing an object from outside the store (KFP's dsl.importer of a
// cloud object): a run whose artifact param names gs://BUCKET/KEY, or
// s3://BUCKET/KEY outside its store, copies that object (or the objects
// below KEY/, a directory) into its store before any step runs, content
// addressed: ImportKey(sha256), with its metadata (type, size, sha256,
// Source). The steps then read that artifact as any other, checked by its
// sha256.
//
// gs:// is read through Cloud Storage's S3-compatible XML API with HMAC
// keys: the endpoint and the keys come from wire.EnvGSEndpoint, wire.EnvGSAccessKey
// and wire.EnvGSSecretKey (any S3-compatible server will do). s3:// is read with
// the S3 settings of an s3:// store (PIPECTL_S3_ENDPOINT, AWS_*: see
// S3Options).
// IsImportEnv reports whether the variable name configures imports
// (wire.EnvGSEndpoint, wire.EnvGSAccessKey, wire.EnvGSSecretKey): the run's, which the
// local runner keeps from the steps' programs, as pods never have it.
func IsImportEnv(name string) bool {
	return name == wire.EnvGSEndpoint || name == wire.EnvGSAccessKey || name == wire.EnvGSSecretKey
}

// importPrefix holds the imported artifacts of a store.
const importPrefix = ".import/"

// ImportKey is the key of the imported artifact whose sha256 is sum.
func ImportKey(sum string) string { return importPrefix + sum }

// ImportOptions configure the reading of import URIs.
type ImportOptions struct {
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// S3 are the settings s3:// URIs are read with (those of an s3://
	// store; empty fields from the environment).
	S3 artifacts.S3Options
	// TempDir is where objects are downloaded before they are stored
	// (the system's when empty).
	TempDir string
}

func (o ImportOptions) getenv(name string) string {
	if o.Getenv == nil {
		return os.Getenv(name)
	}
	return o.Getenv(name)
}

// CheckImportConfig checks, without a request, that uri can be read: a
// gs:// URI needs wire.EnvGSEndpoint, wire.EnvGSAccessKey and wire.EnvGSSecretKey.
func CheckImportConfig(uri string, o ImportOptions) error {
	_, err := o.sourceOptions(uri)
	return err
}

// sourceOptions are the S3 options uri is read with.
func (o ImportOptions) sourceOptions(uri string) (artifacts.S3Options, error) {
	if strings.HasPrefix(uri, uris.OCIScheme) {
		return artifacts.S3Options{}, nil // the registry's credentials: the docker config
	}
	scheme, _, _, err := uris.SplitImportURI(uri)
	if err != nil {
		return artifacts.S3Options{}, err
	}
	if scheme == "s3" {
		return o.S3, nil
	}
	var missing []string
	for _, name := range []string{wire.EnvGSEndpoint, wire.EnvGSAccessKey, wire.EnvGSSecretKey} {
		if o.getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return artifacts.S3Options{}, fmt.Errorf("import %s: set %s (pipectl reads gs:// through Cloud Storage's S3-compatible XML API: %s its endpoint, such as https://storage.googleapis.com, %s and %s an HMAC key); %s not set",
			uri, strings.Join([]string{wire.EnvGSEndpoint, wire.EnvGSAccessKey, wire.EnvGSSecretKey}, ", "), wire.EnvGSEndpoint, wire.EnvGSAccessKey, wire.EnvGSSecretKey, strings.Join(missing, ", "))
	}
	if _, err := uris.ParseS3Endpoint(o.getenv(wire.EnvGSEndpoint)); err != nil {
		return artifacts.S3Options{}, fmt.Errorf("import %s: %s: %w", uri, wire.EnvGSEndpoint, err)
	}
	return artifacts.S3Options{Endpoint: o.getenv(wire.EnvGSEndpoint), AccessKey: o.getenv(wire.EnvGSAccessKey), SecretKey: o.getenv(wire.EnvGSSecretKey)}, nil
}

// Import copies the object at uri (gs:// or s3://), or the objects below
// it as a directory when there is no object of that name, into store s as
// an artifact of type typ, and returns the artifact's URI in s and its
// metadata. An artifact already imported with the same content is kept.
func Import(ctx context.Context, s artifacts.Store, uri, typ string, o ImportOptions) (string, artifacts.Metadata, error) {
	if strings.HasPrefix(uri, uris.OCIScheme) {
		return "", artifacts.Metadata{}, fmt.Errorf("import %s: an image's files are extracted first (pipeline/imports), then stored with ImportDir", uri)
	}
	opts, err := o.sourceOptions(uri)
	if err != nil {
		return "", artifacts.Metadata{}, err
	}
	_, bucket, key, _ := uris.SplitImportURI(uri)
	fail := func(err error) (string, artifacts.Metadata, error) {
		return "", artifacts.Metadata{}, fmt.Errorf("import %s: %w", uri, err)
	}
	src, err := artifacts.NewS3(ctx, bucket, "", opts)
	if err != nil {
		return fail(err)
	}
	if o.TempDir != "" {
		if err := os.MkdirAll(o.TempDir, 0o755); err != nil {
			return fail(err)
		}
	}
	tmp, err := os.MkdirTemp(o.TempDir, "pipectl-import-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, "artifact")
	sum, err := download(ctx, src, key, local)
	if err != nil {
		return fail(err)
	}
	u, meta, err := store(ctx, s, local, sum, typ, uri)
	if err != nil {
		return fail(err)
	}
	return u, meta, nil
}

// ImportDir stores the folder local, the files imported from source (an
// image's model folder), in s as an artifact of type typ, content
// addressed (ImportKey), and returns its URI in s and its metadata.
func ImportDir(ctx context.Context, s artifacts.Store, local, typ, source string) (string, artifacts.Metadata, error) {
	var entries []artifacts.FileEntry
	err := filepath.WalkDir(local, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		sum, err := artifacts.FileSum(ctx, p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		entries = append(entries, artifacts.FileEntry{Path: filepath.ToSlash(rel), SHA256: sum})
		return nil
	})
	if err == nil && len(entries) == 0 {
		err = fmt.Errorf("no file to import")
	}
	if err != nil {
		return "", artifacts.Metadata{}, fmt.Errorf("import %s: %w", source, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	u, meta, err := store(ctx, s, local, artifacts.ManifestSum(entries), typ, source)
	if err != nil {
		return "", artifacts.Metadata{}, fmt.Errorf("import %s: %w", source, err)
	}
	return u, meta, nil
}

// store publishes local, whose sha256 is sum, at ImportKey(sum), unless an
// artifact of that content and type is there.
func store(ctx context.Context, s artifacts.Store, local, sum, typ, source string) (string, artifacts.Metadata, error) {
	dest := ImportKey(sum)
	if meta, err := artifacts.ReadMetadata(ctx, s, dest); err == nil && meta.SHA256 == sum && meta.Type == typ {
		return s.URI(dest), meta, nil
	}
	meta, err := artifacts.Publish(ctx, s, dest, local, artifacts.Metadata{Type: typ, Source: source})
	if err != nil {
		return "", artifacts.Metadata{}, err
	}
	return s.URI(dest), meta, nil
}

// download copies object key of src, or the objects below key/, to local
// and returns the sha256 Publish will give it.
func download(ctx context.Context, src artifacts.Store, key, local string) (string, error) {
	if _, err := src.Stat(ctx, key); err == nil {
		if err := getFile(ctx, src, key, local); err != nil {
			return "", err
		}
		return artifacts.FileSum(ctx, local)
	} else if !errors.Is(err, artifacts.ErrNotFound) {
		return "", err
	}
	objs, err := src.List(ctx, key+"/", true)
	if err != nil {
		return "", err
	}
	var entries []artifacts.FileEntry
	for _, obj := range objs {
		rel := strings.TrimPrefix(obj.Key, key+"/")
		if obj.Dir || rel == "" || strings.HasSuffix(rel, "/") {
			continue // a folder marker
		}
		clean := path.Clean(rel)
		if clean != rel || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
			return "", fmt.Errorf("object %s: not a path below %s/", obj.Key, key)
		}
		dest := filepath.Join(local, filepath.FromSlash(rel))
		if err := getFile(ctx, src, obj.Key, dest); err != nil {
			return "", err
		}
		sum, err := artifacts.FileSum(ctx, dest)
		if err != nil {
			return "", err
		}
		entries = append(entries, artifacts.FileEntry{Path: rel, Size: obj.Size, SHA256: sum})
	}
	if len(entries) == 0 {
		return "", fmt.Errorf("no object %s, and none below %s/", key, key)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return artifacts.ManifestSum(entries), nil
}

// getFile copies object key of src to the file dest.
func getFile(ctx context.Context, src artifacts.Store, key, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	r, err := src.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(dest)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("object %s: %w", key, err)
	}
	return f.Close()
}
