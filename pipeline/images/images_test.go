package images

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"pipectl.dev/pipectl/components/wire"
)

// serve starts a real (in-process) registry, plain HTTP on loopback.
func serve(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// push writes a random image under ref and returns its digest.
func push(t *testing.T, ref string, opts ...name.Option) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func TestResolve(t *testing.T) {
	reg := serve(t)
	d1 := push(t, reg+"/pipectl:e2e")
	d2 := push(t, reg+"/team/trainer:1.0")
	pinned := "some.registry.test/app@sha256:" + strings.Repeat("ab", 32)
	res, err := Resolve(context.Background(), []string{reg + "/pipectl:e2e", reg + "/team/trainer:1.0", pinned, reg + "/pipectl:e2e"}, Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		reg + "/pipectl:e2e":      reg + "/pipectl@" + d1,
		reg + "/team/trainer:1.0": reg + "/team/trainer@" + d2,
		pinned:                    pinned, // already pinned: no registry call (the host does not exist)
	}
	if len(res.Pinned) != len(want) || res.KeptTags {
		t.Errorf("Resolve = %+v, want %v", res, want)
	}
	for k, v := range want {
		if res.Pinned[k] != v || res.Image(k) != v {
			t.Errorf("Pinned[%s] = %q, want %q", k, res.Pinned[k], v)
		}
	}
	if got := res.Image("other:1"); got != "other:1" {
		t.Errorf("Image of an unknown ref = %q", got)
	}
	// A pinned reference is what the registry serves: pull it back.
	back, err := name.ParseReference(res.Pinned[reg+"/pipectl:e2e"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Image(back); err != nil {
		t.Errorf("pull %s: %v", res.Pinned[reg+"/pipectl:e2e"], err)
	}
	// The tag moves: the next resolution pins the new image.
	d3 := push(t, reg+"/pipectl:e2e")
	if got, err := Pin(context.Background(), reg+"/pipectl:e2e", Options{}); err != nil || got != reg+"/pipectl@"+d3 || d3 == d1 {
		t.Errorf("after a push under the same tag: %q, %v; want %s@%s", got, err, reg+"/pipectl", d3)
	}
}

func TestResolveNotFound(t *testing.T) {
	reg := serve(t)
	push(t, reg+"/pipectl:e2e")
	_, err := Resolve(context.Background(), []string{reg + "/pipectl:nope", reg + "/missing:1", reg + "/pipectl:e2e"}, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"image " + reg + "/pipectl:nope: cannot resolve it to a digest through registry " + reg + ": no such image or tag",
		"image " + reg + "/missing:1: cannot resolve it",
		"--image-tags",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "pipectl:e2e") {
		t.Errorf("error %q names an image that resolved", err)
	}
}

// TestInsecure: a registry not on loopback is reached over plain HTTP only
// when named insecure. The name resolves to the in-process registry
// through the transport's dialer.
func TestInsecure(t *testing.T) {
	addr := serve(t)
	digest := push(t, addr+"/pipectl:1")
	const reg = "registry.pipectl.test:5000"
	dial := &net.Dialer{Timeout: 5 * time.Second}
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dial.DialContext(ctx, network, addr)
	}
	ref := reg + "/pipectl:1"

	_, err := Pin(context.Background(), ref, Options{Transport: tr, Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "through registry "+reg) || !strings.Contains(err.Error(), "--insecure-registry "+reg) {
		t.Errorf("plain HTTP registry not named insecure: %v; want an error naming it and the flag", err)
	}
	got, err := Pin(context.Background(), ref, Options{Transport: tr, Insecure: []string{"other.test", reg}})
	if err != nil || got != reg+"/pipectl@"+digest {
		t.Errorf("named insecure: %q, %v; want %s", got, err, reg+"/pipectl@"+digest)
	}
	for _, bad := range []string{"http://" + reg, reg + "/path", ""} {
		if _, err := Pin(context.Background(), ref, Options{Transport: tr, Insecure: []string{bad}}); err == nil || !strings.Contains(err.Error(), "want HOST or HOST:PORT") {
			t.Errorf("insecure %q: %v", bad, err)
		}
	}
	regs, err := ParseInsecure(" a.test:5000, ,b.test ")
	if err != nil || len(regs) != 2 || regs[0] != "a.test:5000" || regs[1] != "b.test" {
		t.Errorf("ParseInsecure = %q, %v", regs, err)
	}
	if _, err := ParseInsecure("a.test,https://b.test"); err == nil || !strings.Contains(err.Error(), wire.EnvInsecureRegistries) {
		t.Errorf("ParseInsecure of a URL: %v", err)
	}
}

func TestKeepTags(t *testing.T) {
	res, err := Resolve(context.Background(), []string{"nowhere.test/pipectl:dev", "pipectl:dev"}, Options{KeepTags: true})
	if err != nil || !res.KeptTags || res.Image("pipectl:dev") != "pipectl:dev" || res.Image("nowhere.test/pipectl:dev") != "nowhere.test/pipectl:dev" {
		t.Errorf("KeepTags: %+v, %v", res, err)
	}
}

// TestTimeout: a registry that never answers is an error in time, not a hang.
func TestTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept, never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = Pin(context.Background(), ln.Addr().String()+"/pipectl:1", Options{Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "through registry "+ln.Addr().String()) {
		t.Errorf("silent registry: %v", err)
	}
}

func TestBadReference(t *testing.T) {
	if _, err := Pin(context.Background(), "UPPER/Case::x", Options{}); err == nil || !strings.Contains(err.Error(), `image "UPPER/Case::x"`) {
		t.Errorf("bad reference: %v", err)
	}
}

func TestRepository(t *testing.T) {
	for in, want := range map[string]string{
		"pipectl:1":                      "pipectl",
		"127.0.0.1:5000/a/b:2":           "127.0.0.1:5000/a/b",
		"127.0.0.1:5000/a/b":             "127.0.0.1:5000/a/b",
		"r.test/x:1@sha256:" + "00":      "r.test/x",
		"r.test:443/x@sha256:" + "00000": "r.test:443/x",
	} {
		if got := Repository(in); got != want {
			t.Errorf("Repository(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDefaultRegistry: references naming no registry are found in the
// default one (a real registry on loopback); those naming one are not
// touched, and with KeepTags they are qualified without a registry call.
func TestDefaultRegistry(t *testing.T) {
	reg := serve(t)
	d1 := push(t, reg+"/pipectl:e2e")
	d2 := push(t, reg+"/team/trainer:1.0")
	other := serve(t)
	d3 := push(t, other+"/app:2")
	refs := []string{"pipectl:e2e", "team/trainer:1.0", other + "/app:2"}
	res, err := Resolve(context.Background(), refs, Options{DefaultRegistry: reg, Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pipectl:e2e":      reg + "/pipectl@" + d1,
		"team/trainer:1.0": reg + "/team/trainer@" + d2,
		other + "/app:2":   other + "/app@" + d3,
	}
	for k, v := range want {
		if res.Image(k) != v {
			t.Errorf("Image(%s) = %q, want %q", k, res.Image(k), v)
		}
	}
	// Not in the default registry: the error names the qualified image.
	_, err = Resolve(context.Background(), []string{"missing:1"}, Options{DefaultRegistry: reg})
	if err == nil || !strings.Contains(err.Error(), "image "+reg+"/missing:1: cannot resolve it to a digest through registry "+reg+": no such image or tag") {
		t.Errorf("missing image in the default registry: %v", err)
	}
	kept, err := Resolve(context.Background(), []string{"pipectl:dev", "nowhere.test/x:1"}, Options{DefaultRegistry: "nowhere.test:5000", KeepTags: true})
	if err != nil || !kept.KeptTags || kept.Image("pipectl:dev") != "nowhere.test:5000/pipectl:dev" || kept.Image("nowhere.test/x:1") != "nowhere.test/x:1" {
		t.Errorf("KeepTags with a default registry: %+v, %v", kept, err)
	}
	if _, err := Resolve(context.Background(), refs, Options{DefaultRegistry: "http://" + reg}); err == nil || !strings.Contains(err.Error(), "default registry") {
		t.Errorf("a URL as default registry: %v", err)
	}
}

func TestQualify(t *testing.T) {
	for _, c := range []struct{ ref, want string }{
		{"pipectl:1", "r.test:5000/pipectl:1"},
		{"team/app:1", "r.test:5000/team/app:1"},
		{"app@sha256:00", "r.test:5000/app@sha256:00"},
		{"127.0.0.1:5000/app:1", "127.0.0.1:5000/app:1"},
		{"other.test/app:1", "other.test/app:1"},
		{"localhost/app", "localhost/app"},
	} {
		if got := Qualify(c.ref, "r.test:5000"); got != c.want {
			t.Errorf("Qualify(%q) = %q, want %q", c.ref, got, c.want)
		}
	}
	if got := Qualify("pipectl:1", ""); got != "pipectl:1" {
		t.Errorf("Qualify without a registry = %q", got)
	}
}

// TestResolveOneBound: three images on a registry that never answers are
// refused in one timeout (resolved at once, one bound for the command),
// not one timeout each, every image named.
func TestResolveOneBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept, never answer
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	const timeout = time.Second
	reg := ln.Addr().String()
	refs := []string{reg + "/a:1", reg + "/b:1", reg + "/c:1"}
	start := time.Now()
	_, err = Resolve(context.Background(), refs, Options{Timeout: timeout, Insecure: []string{reg}})
	took := time.Since(start)
	for _, ref := range refs {
		if err == nil || !strings.Contains(err.Error(), "image "+ref+": cannot resolve it") {
			t.Errorf("error does not name %s: %v", ref, err)
		}
	}
	if took > 2*timeout {
		t.Errorf("3 images on a silent registry took %v, want one bound of %v for them all", took, timeout)
	}
	t.Logf("3 images on a silent registry refused in %v", took)
}
