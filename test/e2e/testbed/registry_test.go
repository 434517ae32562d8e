package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"pipectl.dev/pipectl/pipeline/images"
)

// TestRegistry: the test bed's registry takes a push, pipectl's resolver pins the tag to
// the pushed digest, the blobs are on disk, requests are logged, and stop frees the port.
func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "registry.log")
	r, err := startRegistry(filepath.Join(dir, "registry"), logPath)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = r.stop()
		}
	})
	if !strings.HasPrefix(r.addr, "127.0.0.1:") {
		t.Errorf("registry on %s, want loopback", r.addr)
	}
	ctx := context.Background()
	if err := r.ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.addr+"/team/app:1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push: %v", err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	res, err := images.Resolve(ctx, []string{"team/app:1"}, images.Options{Insecure: []string{r.addr}, DefaultRegistry: r.addr})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Image("team/app:1"), r.addr+"/team/app@"+digest.String(); got != want {
		t.Errorf("pinned %s, want %s", got, want)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "registry", "blobs", d.Algorithm, d.Hex)); err != nil {
			t.Errorf("layer %s not on disk: %v", d, err)
		}
	}
	if err := r.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	stopped = true
	if busy := listening([]int{r.port}); len(busy) > 0 {
		t.Errorf("port %d still listened on after stop", r.port)
	}
	log, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(log), "/v2/team/app/manifests/1") {
		t.Errorf("registry log lacks the manifest push: %v\n%s", err, log)
	}
}
