package artifacts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/components/uris"
)

// DefaultRoot is the embedded default store: a directory in the working directory.
const DefaultRoot = ".pipectl"

// Options configure how a store is opened. Zero values mean "from the
// environment" (the usual AWS_* variables for S3).
type Options struct {
	// S3 holds the S3 endpoint and credentials settings.
	S3 S3Options
}

// Open returns the store at root: a file:// URI, an s3:// URI or a plain
// directory path.
func Open(ctx context.Context, root string, opts Options) (Store, error) {
	if root == "" {
		root = DefaultRoot
	}
	if !strings.Contains(root, "://") {
		return NewLocal(root)
	}
	u, err := url.Parse(root)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL
		}
		return nil, fmt.Errorf("artifact store %q: %v", uris.RedactURL(root), err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("artifact store %q holds credentials: give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, never in the root", uris.RedactURL(root))
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("artifact store %q: a file URI names no host (want file:///path)", root)
		}
		return NewLocal(filepath.FromSlash(u.Path))
	case "s3":
		return NewS3(ctx, u.Host, strings.Trim(u.Path, "/"), opts.S3)
	default:
		return nil, fmt.Errorf("artifact store %q: unsupported scheme %q (want file:// or s3://)", root, u.Scheme)
	}
}

// SplitURI splits an artifact URI below root into its key. It fails when
// uri is not below root. A file:// URI is URL-escaped (a loop iteration's
// key holds STEP[i], written STEP%5Bi%5D): its key is unescaped.
func SplitURI(s Store, uri string) (string, error) {
	root := strings.TrimSuffix(s.Root(), "/") + "/"
	if !strings.HasPrefix(uri, root) {
		return "", fmt.Errorf("%s is not in the artifact store %s", uri, s.Root())
	}
	key := strings.TrimPrefix(uri, root)
	if strings.HasPrefix(root, "file:") {
		k, err := url.PathUnescape(key)
		if err != nil {
			return "", fmt.Errorf("%s: %v", uri, err)
		}
		key = k
	}
	return key, nil
}
