package testbed

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// HostLabel is the image config label by which an image the test bed pushes declares what
// its containers take from the host instead of from its layers (JSON of HostUse). The
// example's runtime (python with torch) stays on the host this way, declared in its image.
const HostLabel = "dev.pipectl.testbed.host"

// HostUse is what an image takes from the host.
type HostUse struct {
	// Root: the container sees the host's root file system (read-write), as images of the
	// node agent's catalogue do; the image's layers are not used.
	Root bool `json:"root,omitempty"`
	// Binds are host files or folders bound into the container over its root file system.
	Binds []Bind `json:"binds,omitempty"`
}

// epoch is every file's and the images' time: the same inputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// DeclaredImage is a linux image of this machine's architecture with the given layers,
// ENV and working directory, whose config declares use (HostLabel).
func DeclaredImage(use HostUse, env []string, workingDir string, layers ...v1.Layer) (v1.Image, error) {
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
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Env = env
	cf.Config.WorkingDir = workingDir
	if use.Root || len(use.Binds) > 0 {
		b, err := json.Marshal(use)
		if err != nil {
			return nil, err
		}
		cf.Config.Labels = map[string]string{HostLabel: string(b)}
	}
	return mutate.ConfigFile(img, cf)
}

// TarEntry is a file, folder or symbolic link of a layer.
type TarEntry struct {
	Name     string // relative, folders ending in "/"
	Mode     int64
	Data     []byte
	Linkname string // a symbolic link to Linkname
}

// TarLayer is a gzipped tar layer of entries (sorted by name, so parents first), with
// fixed times and root owners.
func TarLayer(entries []TarEntry) (v1.Layer, error) {
	entries = append([]TarEntry(nil), entries...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.Linkname != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.Linkname, 0o777
		case strings.HasSuffix(e.Name, "/"):
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.Data); err != nil {
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

// RuntimeImage is the attrition example's runtime image as the test bed builds it:
// examples/attrition/Dockerfile's (python3 with numpy and torch, WORKDIR /app,
// PYTHONUNBUFFERED=1, no code: the code is shipped with each run), except that python and
// its libraries are the host's, declared (HostLabel) as read-only binds of /usr, the
// /etc files the dynamic linker and Debian's alternatives need, and pyDir (whose python3
// has torch, from examples/attrition/ensure-torch.sh). Its layer holds the rest of a root
// file system: the merged-/usr links (or binds where the host has folders), /etc/passwd
// and group, /tmp, /app.
func RuntimeImage(pyDir string) (v1.Image, error) {
	entries := []TarEntry{
		{Name: "app/", Mode: 0o755},
		{Name: "etc/", Mode: 0o755},
		{Name: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")},
		{Name: "root/", Mode: 0o700},
		{Name: "tmp/", Mode: 0o1777},
		{Name: "usr/", Mode: 0o755},
		{Name: "var/", Mode: 0o755},
		{Name: "var/tmp/", Mode: 0o1777},
	}
	binds := []Bind{{Host: "/usr", Path: "/usr", ReadOnly: true}}
	for _, top := range []string{"bin", "lib", "lib64", "sbin"} {
		host := "/" + top
		fi, err := os.Lstat(host)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return nil, err
			}
			entries = append(entries, TarEntry{Name: top, Linkname: target})
		default:
			binds = append(binds, Bind{Host: host, Path: host, ReadOnly: true})
		}
	}
	for _, f := range []string{"/etc/ld.so.cache", "/etc/alternatives"} {
		if _, err := os.Stat(f); err == nil {
			binds = append(binds, Bind{Host: f, Path: f, ReadOnly: true})
		}
	}
	if !strings.HasPrefix(pyDir, "/usr/") {
		binds = append(binds, Bind{Host: pyDir, Path: pyDir, ReadOnly: true})
	}
	// An interpreter outside /usr (a pyenv or venv python) brings its prefix (bin/..).
	if py, err := filepath.EvalSymlinks(filepath.Join(pyDir, "python3")); err != nil {
		return nil, fmt.Errorf("python3 of %s: %w", pyDir, err)
	} else if prefix := filepath.Dir(filepath.Dir(py)); !strings.HasPrefix(py, "/usr/") && prefix != pyDir {
		binds = append(binds, Bind{Host: prefix, Path: prefix, ReadOnly: true})
	}
	layer, err := TarLayer(entries)
	if err != nil {
		return nil, err
	}
	return DeclaredImage(HostUse{Binds: binds},
		[]string{"PATH=" + pyDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONUNBUFFERED=1"},
		"/app", layer)
}

// Push pushes img to the test bed's registry as repoTag (NAME:TAG) and returns its
// reference pinned by digest (REGISTRY/NAME@sha256:…).
func (c *Cluster) Push(ctx context.Context, repoTag string, img v1.Image) (string, error) {
	ref, err := name.ParseReference(c.Registry+"/"+repoTag, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", repoTag, err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s to the test bed's registry: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Name() + "@" + d.String(), nil
}

// PushPipectl pushes pipectl's image to the test bed's registry as PipectlImage, built by
// make image's builder (cmd/pipectl/internal/mkimage, run from repoRoot) around bin, the
// static pipectl PipectlImages built (and the pod runtime beside it), for this machine's
// platform only (building the other platform costs minutes: `pipectl help code-and-images`).
// It returns the pinned reference.
func (c *Cluster) PushPipectl(ctx context.Context, repoRoot, bin string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/pipectl/internal/mkimage",
		"-image", c.Registry+"/"+PipectlImage, "-insecure",
		"-platform", "linux/"+runtime.GOARCH, "-binary", bin, "-pod-binary", filepath.Join(filepath.Dir(bin), "pipectl-pod"))
	cmd.Dir = repoRoot
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mkimage %s: %v\n%s", PipectlImage, err, errOut.String())
	}
	pinned := strings.TrimSpace(out.String())
	if !strings.HasPrefix(pinned, c.Registry+"/") || !strings.Contains(pinned, "@sha256:") {
		return "", fmt.Errorf("mkimage %s printed %q, want the pushed reference pinned by digest", PipectlImage, pinned)
	}
	return pinned, nil
}

// PushPipectlImages pushes pipectl's image (PushPipectl) and the example's runtime image
// (RuntimeImage, as ExampleImage) of what PipectlImages prepared, and returns each
// reference pinned, by catalogue name. Progress (with the times) goes to the test bed's
// progress writer.
func (c *Cluster) PushPipectlImages(ctx context.Context, repoRoot string, p *Prepared) (map[string]string, error) {
	began := time.Now()
	pipectl, err := c.PushPipectl(ctx, repoRoot, p.Pipectl)
	if err != nil {
		return nil, err
	}
	c.say("pushed %s in %s", pipectl, time.Since(began).Round(100*time.Millisecond))
	began = time.Now()
	rt, err := RuntimeImage(p.Python)
	if err != nil {
		return nil, fmt.Errorf("runtime image: %w", err)
	}
	example, err := c.Push(ctx, ExampleImage, rt)
	if err != nil {
		return nil, err
	}
	c.say("pushed %s in %s", example, time.Since(began).Round(100*time.Millisecond))
	return map[string]string{PipectlImage: pipectl, ExampleImage: example}, nil
}
