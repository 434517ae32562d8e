package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths inside the image.
const (
	// BinaryPath is where the binary is (wire.Binary in compiled workflows).
	BinaryPath = "/pipectl/pipectl"
	// PodBinaryPath is where the pod runtime is (wire.PodBinary: what a
	// step pod's init container copies and a launcher pod runs).
	PodBinaryPath = "/pipectl/pipectl-pod"
	// CACertsPath is where the CA certificates are.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// User runs the image's processes (no root).
	User = "65532:65532"
)

// DefaultPlatforms are the image's platforms.
var DefaultPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Options say what to build.
type Options struct {
	// Source is the repository root (the module pipectl.dev/pipectl).
	Source string
	// Package is the main package built into BinaryPath (default ./cmd/pipectl).
	Package string
	// PodPackage is the main package built into PodBinaryPath (default
	// ./cmd/pipectl-pod).
	PodPackage string
	// Version is pipectl's version, linked into the linker variable
	// VersionVar (PACKAGE.NAME; the builder knows it, the library does
	// not). Both are needed to build a binary, not with Binary.
	Version, VersionVar string
	// CACerts is the host's CA bundle (default /etc/ssl/certs/ca-certificates.crt).
	CACerts string
	// Platforms default to DefaultPlatforms.
	Platforms []v1.Platform
	// Binary, when set, is an already built static binary of the one
	// platform of Platforms (which must name exactly one): it is packed
	// as it is, nothing is built. PodBinary is then the pod runtime's.
	Binary, PodBinary string
	// Log gets a line per step (default: nothing).
	Log io.Writer
}

// epoch is every file's and the image's time.
var epoch = time.Unix(0, 0).UTC()

// Build cross-compiles the binary for each platform and returns the index.
func Build(ctx context.Context, opts Options) (v1.ImageIndex, error) {
	if opts.Package == "" {
		opts.Package = "./cmd/pipectl"
	}
	if opts.PodPackage == "" {
		opts.PodPackage = "./cmd/pipectl-pod"
	}
	if (opts.Binary == "") != (opts.PodBinary == "") {
		return nil, fmt.Errorf("prebuilt binaries: give both pipectl's (%q) and the pod runtime's (%q), or neither", opts.Binary, opts.PodBinary)
	}
	if opts.Binary == "" && opts.VersionVar == "" {
		return nil, fmt.Errorf("build %s: no linker variable for the version (Options.VersionVar)", opts.Package)
	}
	if opts.CACerts == "" {
		opts.CACerts = "/etc/ssl/certs/ca-certificates.crt"
	}
	if len(opts.Platforms) == 0 {
		opts.Platforms = DefaultPlatforms
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	if opts.Binary != "" && len(opts.Platforms) != 1 {
		return nil, fmt.Errorf("a prebuilt binary (%s) is one platform's: name exactly one platform, not %d", opts.Binary, len(opts.Platforms))
	}
	certs, err := os.ReadFile(opts.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	base, err := layer([]entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(CACertsPath, "/"), mode: 0o644, data: certs},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, uid: 65532},
		{name: "tmp/", mode: 0o1777, dir: true},
	})
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	tmp, err := os.MkdirTemp("", "pipectl-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, p := range opts.Platforms {
		began := time.Now()
		bin, pod := opts.Binary, opts.PodBinary
		if bin == "" {
			bin, pod = filepath.Join(tmp, p.OS+"-"+p.Architecture), filepath.Join(tmp, p.OS+"-"+p.Architecture+"-pod")
			for _, b := range [][2]string{{bin, opts.Package}, {pod, opts.PodPackage}} {
				if err := goBuild(ctx, opts, p, b[0], b[1]); err != nil {
					return nil, err
				}
			}
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("the binary for %s/%s: %w", p.OS, p.Architecture, err)
		}
		pb, err := os.ReadFile(pod)
		if err != nil {
			return nil, fmt.Errorf("the pod runtime for %s/%s: %w", p.OS, p.Architecture, err)
		}
		top, err := layer([]entry{
			{name: "pipectl/", mode: 0o755, dir: true},
			{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: b},
			{name: strings.TrimPrefix(PodBinaryPath, "/"), mode: 0o755, data: pb},
		})
		if err != nil {
			return nil, err
		}
		img, err := image(p, base, top)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "built %s/%s: %d bytes of binary, %d of pod runtime, in %s\n", p.OS, p.Architecture, len(b), len(pb), time.Since(began).Round(100*time.Millisecond))
		plat := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &plat}})
	}
	return idx, nil
}

// goBuild builds the main package pkg of opts.Source for platform p into
// bin: static, stripped, with the version linked in.
func goBuild(ctx context.Context, opts Options, p v1.Platform, bin, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X "+opts.VersionVar+"="+opts.Version, "-o", bin, pkg)
	cmd.Dir = opts.Source
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %v\n%s", pkg, p.OS, p.Architecture, err, out)
	}
	return nil
}

// image is one platform's image: the base layer, the binary's, the config.
func image(p v1.Platform, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: epoch}
	cf.Config.User = User
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.Env = []string{"PATH=/pipectl:/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=" + CACertsPath}
	cf.Config.WorkingDir = "/"
	return mutate.ConfigFile(img, cf)
}

type entry struct {
	name string
	mode int64
	dir  bool
	uid  int
	data []byte
}

// layer is a gzipped tar of entries (in the order given: parents first),
// with fixed times and owners.
func layer(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: epoch, Uid: e.uid, Gid: e.uid, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// Push writes idx to ref (REGISTRY/NAME:TAG) and returns the pushed
// reference pinned to the index's digest. insecure reaches the registry
// over plain HTTP.
func Push(ctx context.Context, idx v1.ImageIndex, ref string, insecure bool, transport http.RoundTripper) (string, error) {
	var nopts []name.Option
	if insecure {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return "", fmt.Errorf("image %q: %v", ref, err)
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if transport != nil {
		ropts = append(ropts, remote.WithTransport(transport))
	}
	if err := remote.WriteIndex(r, idx, ropts...); err != nil {
		return "", fmt.Errorf("push %s to registry %s: %w", ref, r.Context().RegistryStr(), err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Name() + "@" + d.String(), nil
}
