package images

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
)

// TestPinIgnoresALyingHeader: a registry whose Docker-Content-Digest
// header names another image (on HEAD and GET) does not get that digest
// pinned: the digest pinned is the manifest's own.
func TestPinIgnoresALyingHeader(t *testing.T) {
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	lie := "sha256:" + strings.Repeat("66", 32)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			w = &lyingWriter{ResponseWriter: w, digest: lie}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	reg := strings.TrimPrefix(s.URL, "http://")
	// Pushed straight to the registry, around the lie.
	direct := httptest.NewServer(inner)
	t.Cleanup(direct.Close)
	want := push(t, strings.TrimPrefix(direct.URL, "http://")+"/app:1")
	got, err := Pin(context.Background(), reg+"/app:1", Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	if got != reg+"/app@"+want {
		t.Errorf("pinned %s, want %s (the manifest's digest, not the header's %s)", got, reg+"/app@"+want, lie)
	}
}

type lyingWriter struct {
	http.ResponseWriter
	digest string
}

func (l *lyingWriter) WriteHeader(code int) {
	if l.Header().Get("Docker-Content-Digest") != "" {
		l.Header().Set("Docker-Content-Digest", l.digest)
	}
	l.ResponseWriter.WriteHeader(code)
}
