package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type tarEntry struct {
	name, link string
	typ        byte
	mode       int64
	data       string
}

func testLayer(t *testing.T, entries ...tarEntry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.data))}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pushTest pushes an image of layers with a config (env, working dir, labels) and returns
// its reference pinned by digest.
func pushTest(t *testing.T, reg, repo string, cfg v1.Config, layers ...v1.Layer) string {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, cfg); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(reg+"/"+repo+":1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return reg + "/" + repo + "@" + d.String()
}

// TestPull pulls images from a real registry (in-process, loopback) by digest: the root
// file system has the layers' files, modes, links, with whiteouts applied; the config's
// env, working directory and declared host binds come along; a second image sharing a
// layer downloads only its new one; a pulled image is not fetched again; a layer writing
// through a symbolic link is refused.
func TestPull(t *testing.T) {
	var regLog bytes.Buffer
	s := httptest.NewServer(registry.New(registry.Logger(log.New(&regLog, "", 0))))
	defer s.Close()
	reg := strings.TrimPrefix(s.URL, "http://")
	host := t.TempDir()
	base := testLayer(t,
		tarEntry{name: "usr/", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "usr/bin/", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "usr/bin/tool", typ: tar.TypeReg, mode: 0o755, data: "#!tool\n"},
		tarEntry{name: "bin", typ: tar.TypeSymlink, link: "usr/bin"},
		tarEntry{name: "tmp/", typ: tar.TypeDir, mode: 0o1777},
		tarEntry{name: "etc/", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "etc/gone", typ: tar.TypeReg, mode: 0o644, data: "lower"},
	)
	top := testLayer(t,
		tarEntry{name: "etc/.wh.gone", typ: tar.TypeReg},
		tarEntry{name: "etc/conf", typ: tar.TypeReg, mode: 0o600, data: "upper"},
		tarEntry{name: "usr/bin/tool2", typ: tar.TypeLink, link: "usr/bin/tool"},
	)
	use, _ := json.Marshal(hostUse{Binds: []imageBind{{Host: host, Path: "/opt/py", ReadOnly: true}}})
	ref := pushTest(t, reg, "app", v1.Config{Env: []string{"PATH=/opt/py:/usr/bin", "A=1"}, WorkingDir: "/app",
		Labels: map[string]string{hostLabel: string(use)}}, base, top)

	var logBuf bytes.Buffer
	p, err := newPuller(reg, t.TempDir(), slog.New(slog.NewTextHandler(&logBuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !p.handles(ref) || p.handles("other.test/app:1") {
		t.Errorf("handles: %v for %s, %v for another registry", p.handles(ref), ref, p.handles("other.test/app:1"))
	}
	ctx := context.Background()
	img, err := p.pull(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(ref, "@"+img.digest) || img.rootfs == "" {
		t.Fatalf("pulled %+v from %s", img, ref)
	}
	root := img.rootfs
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	}
	if got := read("usr/bin/tool"); got != "#!tool\n" {
		t.Errorf("usr/bin/tool = %q", got)
	}
	if got := read("bin/tool"); got != "#!tool\n" {
		t.Errorf("bin/tool through the link = %q", got)
	}
	if got := read("etc/conf"); got != "upper" {
		t.Errorf("etc/conf = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/gone")); !os.IsNotExist(err) {
		t.Errorf("etc/gone survived its whiteout: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("tmp: %v, %v; want sticky 1777", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/conf")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("etc/conf mode %v, %v", fi.Mode(), err)
	}
	a, _ := os.Stat(filepath.Join(root, "usr/bin/tool"))
	b, _ := os.Stat(filepath.Join(root, "usr/bin/tool2"))
	if a == nil || b == nil || !os.SameFile(a, b) {
		t.Error("usr/bin/tool2 is not a hard link of usr/bin/tool")
	}
	if img.img.WorkingDir != "/app" || strings.Join(img.img.Env, " ") != "PATH=/opt/py:/usr/bin A=1" ||
		len(img.img.Binds) != 1 || img.img.Binds[0].Host != host || !img.img.Binds[0].ReadOnly {
		t.Errorf("image %+v", img.img)
	}

	// Cached: the same reference asks the registry nothing.
	before := regLog.Len()
	if again, err := p.pull(ctx, ref); err != nil || again != img {
		t.Errorf("second pull: %+v, %v", again, err)
	}
	if regLog.Len() != before {
		t.Errorf("a cached image was fetched again:\n%s", regLog.String()[before:])
	}

	// Another image sharing the base layer: only its own layer is downloaded.
	other := pushTest(t, reg, "other", v1.Config{}, base, testLayer(t, tarEntry{name: "new", typ: tar.TypeReg, mode: 0o644, data: "n"}))
	logBuf.Reset()
	img2, err := p.pull(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logBuf.String(), "layers=2 layersDownloaded=1") || img2.rootfs == root {
		t.Errorf("second image: %s", logBuf.String())
	}
	if _, err := os.Stat(filepath.Join(img2.rootfs, "usr/bin/tool")); err != nil {
		t.Errorf("the shared layer is not unpacked in the second image: %v", err)
	}

	// A host-root image has no root file system of its own.
	hr, _ := json.Marshal(hostUse{Root: true})
	hostImg, err := p.pull(ctx, pushTest(t, reg, "shell", v1.Config{Labels: map[string]string{hostLabel: string(hr)}}))
	if err != nil || hostImg.rootfs != "" {
		t.Errorf("host-root image: %+v, %v", hostImg, err)
	}

	// A layer that writes through a symbolic link (bin → /usr/bin on the host) is refused.
	evil := pushTest(t, reg, "evil", v1.Config{},
		testLayer(t, tarEntry{name: "bin", typ: tar.TypeSymlink, link: host}, tarEntry{name: "bin/planted", typ: tar.TypeReg, mode: 0o644, data: "x"}))
	if _, err := p.pull(ctx, evil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a layer writing through a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(host, "planted")); err == nil {
		t.Error("a layer wrote to the host through a link")
	}
	// An image that is not there is an error naming it.
	if _, err := p.pull(ctx, reg+"/missing@sha256:"+strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), reg+"/missing") {
		t.Errorf("missing image: %v", err)
	}
}

// TestRootfsSandbox: a container of a pulled image starts as the overlay-exec helper with
// the image's root file system as the overlay's lower folder and fresh folders of the
// container's, then bubblewrap with that overlay as /, the declared binds, the volumes and
// its working directory; no mount point is made on the host.
func TestRootfsSandbox(t *testing.T) {
	rootfs := t.TempDir()
	p := &puller{registry: "reg.test:5000", byRef: map[string]*pulledImage{
		"reg.test:5000/app@sha256:00": {digest: "sha256:00", rootfs: rootfs,
			img: image{WorkingDir: "/app", Env: []string{"A=1"}, Binds: []imageBind{{Host: "/usr", Path: "/usr", ReadOnly: true}}}},
	}}
	r := &runtime{runtimeConfig: runtimeConfig{bwrap: "bwrap", hosts: &hostsFile{path: "/hosts"}, puller: p, images: imageCatalogue{}},
		mounts: newMountPoints(), self: "/agent"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "reg.test:5000/app@sha256:00",
			VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/var/run/argo"}}}}}}
	vol := t.TempDir()
	run := newPodRun("ns/p", "n", pod, t.TempDir())
	args, err := r.sandboxArgs(run, &pod.Spec.Containers[0], map[string]volume{"v": {hostPath: vol}})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	layer := filepath.Join(run.dir, "rootfs", "c")
	if !strings.HasPrefix(line, "/agent "+overlayExecCmd+" "+rootfs+" "+layer+"/upper "+layer+"/work "+layer+"/merged -- bwrap ") {
		t.Errorf("sandbox args do not start with the overlay helper:\n%s", line)
	}
	for _, d := range []string{"upper", "work", "merged"} {
		if fi, err := os.Stat(filepath.Join(layer, d)); err != nil || !fi.IsDir() {
			t.Errorf("the container's overlay folder %s: %v", d, err)
		}
	}
	for _, want := range []string{"--bind " + layer + "/merged / ", "--ro-bind /usr /usr",
		"--bind " + vol + " /var/run/argo", "--dir /app --chdir /app --"} {
		if !strings.Contains(line, want) {
			t.Errorf("sandbox args lack %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "--bind / /") {
		t.Errorf("a pulled image's container sees the host's root:\n%s", line)
	}
	if len(r.mounts.users) != 0 {
		t.Errorf("mount points made on the host: %v", r.mounts.users)
	}
	env, err := r.containerEnv(t.Context(), pod, &pod.Spec.Containers[0])
	if err != nil || !strings.Contains(strings.Join(env, " "), "A=1") {
		t.Errorf("env %q, %v: want the image's A=1", env, err)
	}
}
