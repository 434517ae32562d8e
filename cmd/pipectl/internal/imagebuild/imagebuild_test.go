package imagebuild

import (
	"archive/tar"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestBuildPushPull builds the image of a stand-in program (a real cross
// build, quick) for both platforms, pushes it to a real in-process
// registry, pulls it back and checks the index, each image's config and
// files, runs the host platform's binary, and that a second build gives
// the same digest.
func TestBuildPushPull(t *testing.T) {
	s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer s.Close()
	reg := strings.TrimPrefix(s.URL, "http://")
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The stand-in is the pod runtime too (the real one is built and
	// bounded by cmd/pipectl/pipectl-pod's tests).
	standIn := "./cmd/pipectl/internal/imagebuild/testdata/version"
	opts := Options{Source: root, Package: standIn, PodPackage: standIn, Version: "v9.8.7", VersionVar: "main.version"}
	idx, err := Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := Push(ctx, idx, reg+"/pipectl:test", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pinned, reg+"/pipectl@sha256:") {
		t.Errorf("pushed %s", pinned)
	}

	ref, err := name.ParseReference(reg + "/pipectl:test")
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, m := range im.Manifests {
		plats = append(plats, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	if strings.Join(plats, " ") != "linux/amd64 linux/arm64" {
		t.Fatalf("index platforms %v", plats)
	}
	dir := t.TempDir()
	for _, m := range im.Manifests {
		img, err := pulled.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || cf.Architecture != m.Platform.Architecture || cf.OS != "linux" || cf.Created.Unix() != 0 {
			t.Errorf("%s: config user %q, platform %s/%s, created %v", m.Platform.Architecture, cf.Config.User, cf.OS, cf.Architecture, cf.Created)
		}
		files := unpack(t, img)
		bin, ok := files[strings.TrimPrefix(BinaryPath, "/")]
		if !ok || bin.Mode&0o111 == 0 || bin.Uid != 0 || !bin.ModTime.Equal(epoch) {
			t.Fatalf("%s: %s: %+v", m.Platform.Architecture, BinaryPath, bin)
		}
		if c := files[strings.TrimPrefix(CACertsPath, "/")]; c == nil || c.Size == 0 {
			t.Errorf("%s: no CA certificates", m.Platform.Architecture)
		}
		if tmp := files["tmp/"]; tmp == nil || tmp.Mode&0o1777 != 0o1777 {
			t.Errorf("%s: /tmp %+v", m.Platform.Architecture, tmp)
		}
		if m.Platform.Architecture == runtime.GOARCH && runtime.GOOS == "linux" {
			out := filepath.Join(dir, "pipectl")
			if err := os.WriteFile(out, bin.data, 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := exec.Command(out, "version").Output()
			if err != nil || strings.TrimSpace(string(got)) != "pipectl v9.8.7" {
				t.Errorf("the pulled binary's version: %q, %v", got, err)
			}
			pod := files[strings.TrimPrefix(PodBinaryPath, "/")]
			if pod == nil || pod.Mode&0o111 == 0 {
				t.Fatalf("%s: want an executable, got none", PodBinaryPath)
			}
			podOut := filepath.Join(dir, "pipectl-pod")
			if err := os.WriteFile(podOut, pod.data, 0o755); err != nil {
				t.Fatal(err)
			}
			got, err = exec.Command(podOut, "version").Output()
			if err != nil || strings.TrimSpace(string(got)) != "pipectl v9.8.7" {
				t.Errorf("the pulled pod runtime's version: %q, %v", got, err)
			}
		}
	}

	again, err := Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds: %s and %s, want one digest", d1, d2)
	}
}

type file struct {
	*tar.Header
	data []byte
}

// unpack reads every file of img's layers.
func unpack(t *testing.T, img v1.Image) map[string]*file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*file{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = &file{h, b}
		}
		rc.Close()
	}
	return files
}

// TestBuildPrebuiltBinary: Options.Binary and PodBinary pack the given
// files as the one platform's binaries, building nothing; they need exactly
// one platform, and each other.
func TestBuildPrebuiltBinary(t *testing.T) {
	bin, podBin := filepath.Join(t.TempDir(), "pipectl"), filepath.Join(t.TempDir(), "pipectl-pod")
	want, wantPod := []byte("#!/bin/sh\necho prebuilt\n"), []byte("#!/bin/sh\necho pod\n")
	if err := os.WriteFile(bin, want, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(podBin, wantPod, 0o755); err != nil {
		t.Fatal(err)
	}
	plat := v1.Platform{OS: "linux", Architecture: "arm64"}
	idx, err := Build(context.Background(), Options{Source: t.TempDir(), Binary: bin, PodBinary: podBin, Platforms: []v1.Platform{plat}})
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests %+v, want one for linux/arm64", im.Manifests)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	files := unpack(t, img)
	got := files[strings.TrimPrefix(BinaryPath, "/")]
	if got == nil || string(got.data) != string(want) || got.Mode&0o111 == 0 {
		t.Errorf("%s in the image: %+v, want the prebuilt file, executable", BinaryPath, got)
	}
	if got := files[strings.TrimPrefix(PodBinaryPath, "/")]; got == nil || string(got.data) != string(wantPod) || got.Mode&0o111 == 0 {
		t.Errorf("%s in the image: %+v, want the prebuilt pod runtime, executable", PodBinaryPath, got)
	}
	if _, err := Build(context.Background(), Options{Source: t.TempDir(), Binary: bin, Platforms: []v1.Platform{plat}}); err == nil || !strings.Contains(err.Error(), "pod runtime") {
		t.Errorf("a prebuilt pipectl without its pod runtime: %v, want an error naming the pod runtime", err)
	}
	if _, err := Build(context.Background(), Options{Source: t.TempDir(), Platforms: []v1.Platform{plat}}); err == nil || !strings.Contains(err.Error(), "Options.VersionVar") {
		t.Errorf("building with no version variable: %v, want an error naming Options.VersionVar", err)
	}
	if _, err := Build(context.Background(), Options{Source: t.TempDir(), Binary: bin, PodBinary: podBin}); err == nil || !strings.Contains(err.Error(), "exactly one platform") {
		t.Errorf("a prebuilt binary for the two default platforms: %v", err)
	}
	if _, err := Build(context.Background(), Options{Source: t.TempDir(), Binary: bin + ".missing", PodBinary: podBin, Platforms: []v1.Platform{plat}}); err == nil || !strings.Contains(err.Error(), "linux/arm64") {
		t.Errorf("a missing prebuilt binary: %v", err)
	}
}
