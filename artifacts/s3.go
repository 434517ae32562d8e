package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
)

// Defaults of the S3 store's transfer settings.
const (
	// DefaultS3PartSize is the size of one part of a multipart upload.
	DefaultS3PartSize = 16 << 20
	// DefaultS3Concurrency is the number of parts of one object uploaded at once.
	DefaultS3Concurrency = 4
	// defaultS3Endpoint is used when neither options nor environment name one.
	defaultS3Endpoint = "https://s3.amazonaws.com"
	// maxParts is S3's limit on the parts of one multipart upload.
	maxParts = 10000
	// minPartSize is S3's lower bound on every part but the last.
	minPartSize = 5 << 20
)

// S3Options configure the S3 store. Empty fields come from the environment.
type S3Options struct {
	// Endpoint is the S3 service: host[:port] or https://host[:port] for
	// TLS, http://host[:port] for plain HTTP. When empty: AWS_ENDPOINT_URL_S3,
	// then AWS_ENDPOINT_URL, then https://s3.amazonaws.com.
	Endpoint string
	// Region is the bucket's region. When empty: AWS_REGION, then
	// AWS_DEFAULT_REGION, then whatever the service reports for the bucket.
	Region string
	// AccessKey and SecretKey are static credentials. When AccessKey is
	// empty, credentials come from minio-go's chain, first hit wins:
	// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN,
	// MINIO_ROOT_USER/MINIO_ROOT_PASSWORD, the shared credentials file
	// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile
	// AWS_PROFILE), mc's ~/.mc/config.json, then IAM (web identity, ECS or
	// EC2 instance role). When AccessKey is set and SecretKey is empty,
	// SecretKey comes from AWS_SECRET_ACCESS_KEY.
	AccessKey string
	SecretKey string
	// SessionToken goes with AccessKey for temporary credentials.
	SessionToken string
	// Insecure skips verification of the service's TLS certificate
	// (PIPECTL_S3_INSECURE=true when false). A private CA is better added
	// with SSL_CERT_FILE.
	Insecure bool
	// PartSize is the part size of multipart uploads (DefaultS3PartSize
	// when zero, at least 5 MiB). Objects too large for 10,000 parts of
	// this size get larger parts.
	PartSize int64
	// Concurrency is the number of parts of one object in flight at once
	// (DefaultS3Concurrency when zero).
	Concurrency int
	// MaxMemory bounds the bytes buffered by all uploads of the store at
	// once; (Concurrency+1)×PartSize when zero.
	MaxMemory int64
	// MaxRetries is how many times a request is tried on transient errors
	// (minio-go's default, 10, when zero).
	MaxRetries int
	// ReconnectWait is how long the store waits for a server that answered
	// once and now refuses connections (a restart) before a transfer fails
	// (DefaultS3ReconnectWait when zero; negative: not at all).
	ReconnectWait time.Duration
}

// s3Config is S3Options resolved against the environment.
type s3Config struct {
	host        string // host[:port]
	secure      bool
	endpoint    string // URL for messages, e.g. https://s3.amazonaws.com
	region      string
	accessKey   string
	secretKey   string
	token       string
	insecure    bool
	partSize    int64
	concurrency int
	maxMemory   int64
	maxRetries  int
	reconnect   time.Duration
}

// resolveS3Options fills opts' empty fields from getenv and checks them. It
// is pure: all environment access goes through getenv.
func resolveS3Options(opts S3Options, getenv func(string) string) (s3Config, error) {
	c := s3Config{
		region:      firstNonEmpty(opts.Region, getenv(wire.EnvRegion), getenv(wire.EnvDefaultRegion)),
		accessKey:   opts.AccessKey,
		secretKey:   opts.SecretKey,
		token:       opts.SessionToken,
		insecure:    opts.Insecure,
		partSize:    opts.PartSize,
		concurrency: opts.Concurrency,
		maxMemory:   opts.MaxMemory,
		maxRetries:  opts.MaxRetries,
		reconnect:   opts.ReconnectWait,
	}
	u, err := uris.ParseS3Endpoint(firstNonEmpty(opts.Endpoint, getenv(wire.EnvS3Endpoint), getenv(wire.EnvEndpoint), defaultS3Endpoint))
	if err != nil {
		return c, err
	}
	c.host, c.secure = u.Host, u.Scheme == "https"
	c.endpoint = u.Scheme + "://" + u.Host
	if !c.insecure {
		if v := getenv(wire.EnvS3Insecure); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("%s=%q: want true or false", wire.EnvS3Insecure, v)
			}
			c.insecure = b
		}
	}
	if c.accessKey != "" && c.secretKey == "" {
		c.secretKey = getenv(wire.EnvSecretKey)
		if c.secretKey == "" {
			return c, fmt.Errorf("S3 access key %q has no secret key (set it or %s)", c.accessKey, wire.EnvSecretKey)
		}
	}
	if c.accessKey == "" && c.secretKey != "" {
		return c, errors.New("S3 secret key given without an access key")
	}
	if c.partSize == 0 {
		c.partSize = DefaultS3PartSize
	}
	if c.partSize < minPartSize {
		return c, fmt.Errorf("S3 part size %d is below S3's minimum of 5 MiB", c.partSize)
	}
	if c.concurrency <= 0 {
		c.concurrency = DefaultS3Concurrency
	}
	if c.maxMemory == 0 {
		c.maxMemory = int64(c.concurrency+1) * c.partSize
	}
	if c.reconnect == 0 {
		c.reconnect = DefaultS3ReconnectWait
	}
	if c.maxMemory < c.partSize {
		return c, fmt.Errorf("S3 upload memory %d is below the part size %d", c.maxMemory, c.partSize)
	}
	return c, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// S3 is a Store kept in a bucket of an S3 service (AWS, MinIO, …). Each key
// is one object named <prefix>/<key>, so S3 browsers show real files.
type S3 struct {
	core     *minio.Core
	bucket   string
	prefix   string // without leading or trailing slash; may be empty
	endpoint string
	secret   string // redacted from every error
	cfg      s3Config
	pool     *chunkPool
}

// NewS3 returns the store at s3://bucket/prefix. It checks that the bucket
// exists and that the credentials may read it.
func NewS3(ctx context.Context, bucket, prefix string, opts S3Options) (Store, error) {
	return newS3(ctx, bucket, prefix, opts, os.Getenv)
}

func newS3(ctx context.Context, bucket, prefix string, opts S3Options, getenv func(string) string) (*S3, error) {
	if bucket == "" {
		return nil, errors.New("s3 artifact store names no bucket (want s3://bucket/prefix)")
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if _, err := checkKey(prefix); err != nil {
			return nil, fmt.Errorf("s3 artifact store prefix: %w", err)
		}
	}
	cfg, err := resolveS3Options(opts, getenv)
	if err != nil {
		return nil, err
	}
	tr, err := minio.DefaultTransport(cfg.secure)
	if err != nil {
		return nil, err
	}
	tr.DialContext = newReconnectDialer(tr.DialContext, cfg.reconnect).DialContext
	tr.WriteBufferSize = 64 << 10
	tr.ReadBufferSize = 64 << 10
	if cfg.secure && cfg.insecure {
		tr.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // asked for with Insecure
	}
	var creds *credentials.Credentials
	if cfg.accessKey != "" {
		creds = credentials.NewStaticV4(cfg.accessKey, cfg.secretKey, cfg.token)
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.EnvMinio{},
			&credentials.FileAWSCredentials{},
			&credentials.FileMinioClient{},
			&credentials.IAM{},
		})
	}
	client, err := minio.New(cfg.host, &minio.Options{
		Creds:      creds,
		Secure:     cfg.secure,
		Region:     cfg.region,
		Transport:  tr,
		MaxRetries: cfg.maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 endpoint %s: %w", cfg.endpoint, err)
	}
	s := &S3{
		core:     &minio.Core{Client: client},
		bucket:   bucket,
		prefix:   prefix,
		endpoint: cfg.endpoint,
		secret:   cfg.secretKey,
		cfg:      cfg,
		pool:     newChunkPool(cfg.maxMemory),
	}
	if s.secret == "" {
		s.secret = firstNonEmpty(getenv(wire.EnvSecretKey), getenv("AWS_SECRET_KEY"), getenv("MINIO_ROOT_PASSWORD"))
	}
	ok, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return nil, s.wrap("open", "", err)
	}
	if !ok {
		return nil, s.bucketMissing()
	}
	return s, nil
}

// Bucket returns the store's bucket.
func (s *S3) Bucket() string { return s.bucket }

// Endpoint returns the URL of the store's S3 service.
func (s *S3) Endpoint() string { return s.endpoint }

// Region returns the bucket's region: the one the store was given (option,
// AWS_REGION, AWS_DEFAULT_REGION), else the one the service reported when
// the store was opened (kept since: no request).
func (s *S3) Region(ctx context.Context) (string, error) {
	return s.core.GetBucketLocation(ctx, s.bucket)
}

// Region returns the region of store's bucket when store is an S3 store
// that knows it (S3.Region), "" otherwise: what pods on another machine
// can be told (AWS_REGION) so that their store asks the service no
// bucket location before its first request.
func Region(ctx context.Context, store Store) string {
	s, ok := store.(*S3)
	if !ok {
		return ""
	}
	r, err := s.Region(ctx)
	if err != nil {
		return ""
	}
	return r
}

// Root implements Store.
func (s *S3) Root() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

// URI implements Store.
func (s *S3) URI(key string) string { return s.Root() + "/" + key }

// object returns the object name of key.
func (s *S3) object(key string) (string, error) {
	k, err := checkKey(key)
	if err != nil {
		return "", err
	}
	if s.prefix == "" {
		return k, nil
	}
	return s.prefix + "/" + k, nil
}

// checkKey accepts the keys Local accepts: clean, relative, slash-separated.
func checkKey(key string) (string, error) {
	clean := path.Clean("/" + key)
	if key == "" || clean == "/" || strings.Contains(key, "\\") || clean[1:] != strings.TrimSuffix(key, "/") {
		return "", fmt.Errorf("invalid object key %q", key)
	}
	return clean[1:], nil
}

// contentType names the media type S3 browsers show for key.
func contentType(key string) string {
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		return t
	}
	if strings.HasSuffix(key, ".log") {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// Get implements Store. The object streams from the service.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap("read", key, err)
	}
	return &s3Body{ReadCloser: body, s: s, key: key}, nil
}

// s3Body adds the store's context to errors in the middle of a download.
type s3Body struct {
	io.ReadCloser
	s   *S3
	key string
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.wrap("read", b.key, err)
	}
	return n, err
}

// Stat implements Store.
func (s *S3) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	name, err := s.object(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.core.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, s.wrap("stat", key, err)
	}
	return ObjectInfo{Key: key, Size: info.Size, Modified: info.LastModified}, nil
}

// List implements Store.
func (s *S3) List(ctx context.Context, prefix string, recursive bool) ([]ObjectInfo, error) {
	full := prefix
	if s.prefix != "" {
		full = s.prefix + "/" + prefix
	}
	base := ""
	if s.prefix != "" {
		base = s.prefix + "/"
	}
	var out []ObjectInfo
	seen := map[string]bool{}
	for o := range s.core.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: recursive}) {
		if o.Err != nil {
			return nil, s.wrap("list", prefix, o.Err)
		}
		key := strings.TrimPrefix(o.Key, base)
		if !strings.HasPrefix(o.Key, base) || !strings.HasPrefix(key, prefix) {
			continue
		}
		if strings.HasSuffix(key, "/") {
			// A common prefix, or a "folder" marker object made by a browser.
			if recursive || seen[key] || !strings.HasPrefix(key, prefix) {
				continue
			}
			seen[key] = true
			out = append(out, ObjectInfo{Key: key, Dir: true})
			continue
		}
		out = append(out, ObjectInfo{Key: key, Size: o.Size, Modified: o.LastModified})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	if err := s.core.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil {
		return s.wrap("delete", key, err)
	}
	return nil
}

// bucketMissing is the error for a bucket that does not exist.
func (s *S3) bucketMissing() error {
	return fmt.Errorf("s3 artifact store %s: bucket %q does not exist at %s (create it, e.g. `mc mb ALIAS/%s`)",
		s.Root(), s.bucket, s.endpoint, s.bucket)
}

// wrap turns a minio-go error about key (the store root when key is empty)
// into one that names the object and the endpoint, maps missing objects to
// ErrNotFound and never shows the secret key.
func (s *S3) wrap(op, key string, err error) error {
	where := s.Root()
	if key != "" {
		where = s.URI(key)
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "NoSuchKey":
			return fmt.Errorf("%s: %w", where, ErrNotFound)
		case "NoSuchBucket":
			return s.bucketMissing()
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidTokenId":
			return s.redact(&S3AccessError{Op: op, URI: where, Endpoint: s.endpoint, Code: resp.Code, Message: resp.Message})
		}
		if resp.StatusCode == http.StatusNotFound && resp.Code == "" {
			return fmt.Errorf("%s: %w", where, ErrNotFound)
		}
	}
	return s.redact(fmt.Errorf("%s %s at %s: %w", op, where, s.endpoint, shortURLError(err)))
}

// shortURLError drops the request URL (long, and already named by the
// caller) from a *url.Error's message, keeping it in the chain.
func shortURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return urlError{ue}
	}
	return err
}

type urlError struct{ u *url.Error }

func (e urlError) Error() string { return e.u.Err.Error() }
func (e urlError) Unwrap() error { return e.u }

// redact replaces the secret key in err's message.
func (s *S3) redact(err error) error {
	if s.secret == "" || !strings.Contains(err.Error(), s.secret) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), s.secret, "[secret]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// S3AccessError reports a request the S3 service refused for its
// credentials. It names the endpoint and never the secret key.
type S3AccessError struct {
	Op       string // what was tried: open, read, write, …
	URI      string
	Endpoint string
	Code     string // the S3 error code, e.g. InvalidAccessKeyId
	Message  string
}

func (e *S3AccessError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "access denied"
	}
	return fmt.Sprintf("%s %s: %s refused the credentials: %s (%s); check the access key and secret key (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)",
		e.Op, e.URI, e.Endpoint, strings.TrimSuffix(msg, "."), e.Code)
}

var _ Store = (*S3)(nil)
