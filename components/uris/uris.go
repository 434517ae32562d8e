// Package uris holds the syntax of the URIs pipectl reads and writes, with
// no I/O: artifact and import URIs (what an artifact input may be given),
// S3 endpoints, and the redaction of credentials in a URL before it is
// shown. The artifact store, the spec, the plan and the compiler share it.
package uris

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The URIs an artifact input may be given: an artifact of an artifact store
// (CheckURI: an output of an earlier run, file:///… or s3://…) or an object
// a run imports into its store before any step runs (CheckImportURI:
// gs://, s3://, oci://; package pipeline/imports copies them). These are
// syntax checks: whether a URI names an object of a given store is for the
// store to say.

// URISchemes are how the URIs of a store's artifacts begin: a local
// store's (file:///DIR/…) and an S3 store's (s3://BUCKET/…).
var URISchemes = []string{"file:///", "s3://"}

// CheckURI checks that uri can name an artifact of an artifact store (it
// begins with one of URISchemes and is one line without surrounding
// spaces); whether it names one of a given store is for SplitURI and the
// artifact's metadata to say.
func CheckURI(uri string) error {
	ok := strings.TrimSpace(uri) == uri && !strings.ContainsAny(uri, "\n\r\t")
	ok = ok && slices.ContainsFunc(URISchemes, func(s string) bool { return strings.HasPrefix(uri, s) && len(uri) > len(s) })
	if !ok {
		return fmt.Errorf("%q is not the URI of an artifact an artifact store can hold: expected %s…, such as an output of an earlier run (pipectl artifacts ls RUN)", uri, strings.Join(URISchemes, "… or "))
	}
	return nil
}

// OCIScheme begins the URI of a ModelCar (KFP: a model shipped as an OCI
// image, oci://REGISTRY/REPOSITORY:TAG), whose model folder a run imports
// as a directory (pipeline/imports; ImportDir stores it).
const OCIScheme = "oci://"

// CheckImportURI checks that uri names an object pipectl can import:
// gs://BUCKET/KEY, s3://BUCKET/KEY or oci://IMAGE, one line without
// surrounding spaces.
func CheckImportURI(uri string) error {
	if ref, ok := strings.CutPrefix(uri, OCIScheme); ok {
		if ref == "" || strings.ContainsAny(uri, " \n\r\t") {
			return fmt.Errorf("%q is not the URI of an image to import: expected oci://REGISTRY/REPOSITORY:TAG", uri)
		}
		return nil
	}
	_, _, _, err := SplitImportURI(uri)
	return err
}

// SplitImportURI splits an import URI (gs:// or s3://) into its scheme,
// bucket and key, checking it as CheckImportURI does.
func SplitImportURI(uri string) (scheme, bucket, key string, err error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || (scheme != "gs" && scheme != "s3") || strings.TrimSpace(uri) != uri || strings.ContainsAny(uri, "\n\r\t") {
		return "", "", "", fmt.Errorf("%q is not the URI of an object to import: expected gs://BUCKET/KEY or s3://BUCKET/KEY", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	key = strings.TrimSuffix(key, "/")
	if bucket == "" || key == "" {
		return "", "", "", fmt.Errorf("%q is not the URI of an object to import: expected %s://BUCKET/KEY", uri, scheme)
	}
	return scheme, bucket, key, nil
}

// CheckArtifactOrImportURI checks that uri names an artifact of an
// artifact store (CheckURI) or an object to import (CheckImportURI): the
// value of an artifact param.
func CheckArtifactOrImportURI(uri string) error {
	if CheckURI(uri) == nil || CheckImportURI(uri) == nil {
		return nil
	}
	return fmt.Errorf("%q is neither the URI of an artifact an artifact store can hold (%s…, such as an output of an earlier run: pipectl artifacts ls RUN) nor that of an object to import (gs://BUCKET/KEY, s3://BUCKET/KEY, oci://IMAGE)", uri, strings.Join(URISchemes, "… or "))
}

// ParseS3Endpoint checks an S3 endpoint as the S3 store takes it: host[:port]
// (TLS), https://host[:port] or http://host[:port], nothing else. Credentials
// in it (http://KEY:SECRET@host) are refused, and no error repeats them:
// they belong in the environment or a Secret, never in a flag that lands in
// a compiled workflow or a log.
func ParseS3Endpoint(ep string) (*url.URL, error) {
	shown := RedactURL(ep)
	if !strings.Contains(ep, "://") {
		ep = "https://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL
		}
		return nil, fmt.Errorf("S3 endpoint %q: %v", shown, err)
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("S3 endpoint %q holds credentials: give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a Secret), never in the endpoint", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("S3 endpoint %q: want host[:port], https://host[:port] or http://host[:port]", shown)
	case u.Host == "":
		return nil, fmt.Errorf("S3 endpoint %q names no host", shown)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("S3 endpoint %q: want only a scheme, host and port (the bucket and prefix go in the s3:// root)", shown)
	}
	return u, nil
}

// RedactURL returns s with the user information of a URL in it
// (scheme://USER:PASSWORD@host) replaced by "REDACTED@", found textually so
// that it works on strings no URL parser accepts.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	start := i + 3
	if i < 0 {
		start = 0
	}
	end := len(s)
	if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.LastIndex(s[start:end], "@")
	if at < 0 {
		return s
	}
	return s[:start] + "REDACTED" + s[start+at:]
}
