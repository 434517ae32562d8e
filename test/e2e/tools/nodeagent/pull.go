package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// hostLabel is the image config label by which an image declares what its containers
// take from the host rather than from its layers (testbed.HostLabel): JSON of hostUse.
const hostLabel = "dev.pipectl.testbed.host"

// hostUse is what an image takes from the host (testbed.HostUse).
type hostUse struct {
	// Root: the container sees the host's root file system, as catalogue images do.
	Root bool `json:"root,omitempty"`
	// Binds are bound over the image's root file system.
	Binds []imageBind `json:"binds,omitempty"`
}

// pulledImage is an image pulled from the registry and unpacked.
type pulledImage struct {
	// digest is the image manifest's digest (of this node's platform).
	digest string
	// rootfs is the unpacked root file system ("" when the image declares the host's root).
	rootfs string
	// img is what the container sees besides the root file system: declared host binds,
	// the config's working directory and env.
	img image
}

// puller pulls images of one registry by digest (a tag is resolved once) and unpacks them
// under dir: compressed layers cached by digest in dir/blobs/sha256/HEX (a layer already
// there is not downloaded again), root file systems in dir/rootfs/HEX by image digest
// (an image unpacked once is not unpacked again).
type puller struct {
	registry string // HOST:PORT, plain HTTP
	dir      string
	log      *slog.Logger

	mu     sync.Mutex
	byRef  map[string]*pulledImage
	flight map[string]*pullCall
}

// pullCall is one pull in progress: pods of the same image wait for it.
type pullCall struct {
	done chan struct{}
	img  *pulledImage
	err  error
}

func newPuller(registry, dir string, log *slog.Logger) (*puller, error) {
	for _, d := range []string{"blobs/sha256", "rootfs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("image dir: %w", err)
		}
	}
	return &puller{registry: registry, dir: dir, log: log, byRef: map[string]*pulledImage{}, flight: map[string]*pullCall{}}, nil
}

// handles reports whether ref names an image of the puller's registry.
func (p *puller) handles(ref string) bool {
	return p != nil && strings.HasPrefix(ref, p.registry+"/")
}

// cached is ref's image when it was pulled already.
func (p *puller) cached(ref string) (*pulledImage, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	img, ok := p.byRef[ref]
	return img, ok
}

// pull returns ref's image, pulling and unpacking what is not cached yet. Concurrent pulls
// of one reference share the work.
func (p *puller) pull(ctx context.Context, ref string) (*pulledImage, error) {
	p.mu.Lock()
	if img, ok := p.byRef[ref]; ok {
		p.mu.Unlock()
		return img, nil
	}
	if call, ok := p.flight[ref]; ok {
		p.mu.Unlock()
		select {
		case <-call.done:
			return call.img, call.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	call := &pullCall{done: make(chan struct{})}
	p.flight[ref] = call
	p.mu.Unlock()

	call.img, call.err = p.fetch(ctx, ref)
	p.mu.Lock()
	delete(p.flight, ref)
	if call.err == nil {
		p.byRef[ref] = call.img
	}
	p.mu.Unlock()
	close(call.done)
	return call.img, call.err
}

// fetch resolves ref to this node's platform's image, downloads the layers missing from
// the cache and unpacks the image unless its root file system is there.
func (p *puller) fetch(ctx context.Context, ref string) (*pulledImage, error) {
	began := time.Now()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", ref, err)
	}
	ri, err := remote.Image(r, remote.WithContext(ctx),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}))
	if err != nil {
		return nil, fmt.Errorf("pull %s from %s: %w", ref, p.registry, err)
	}
	digest, err := ri.Digest()
	if err != nil {
		return nil, fmt.Errorf("pull %s: manifest: %w", ref, err)
	}
	cf, err := ri.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("pull %s: config: %w", ref, err)
	}
	out := &pulledImage{digest: digest.String(), img: image{Env: cf.Config.Env, WorkingDir: cf.Config.WorkingDir}}
	var use hostUse
	if v, ok := cf.Config.Labels[hostLabel]; ok {
		if err := json.Unmarshal([]byte(v), &use); err != nil {
			return nil, fmt.Errorf("pull %s: label %s: %w", ref, hostLabel, err)
		}
		for i, b := range use.Binds {
			if !filepath.IsAbs(b.Path) {
				return nil, fmt.Errorf("pull %s: label %s: binds[%d].path %q is not absolute", ref, hostLabel, i, b.Path)
			}
			if _, err := os.Stat(b.Host); err != nil {
				return nil, fmt.Errorf("pull %s: label %s: binds[%d].host: %w", ref, hostLabel, i, err)
			}
		}
		out.img.Binds = use.Binds
	}
	layers, err := ri.Layers()
	if err != nil {
		return nil, fmt.Errorf("pull %s: layers: %w", ref, err)
	}
	var fetched, fetchedBytes int64
	var blobs []string
	for _, l := range layers {
		path, n, err := p.blob(l)
		if err != nil {
			return nil, fmt.Errorf("pull %s: %w", ref, err)
		}
		if n > 0 {
			fetched++
			fetchedBytes += n
		}
		blobs = append(blobs, path)
	}
	downloaded := time.Since(began)
	unpacked := false
	if !use.Root {
		out.rootfs = filepath.Join(p.dir, "rootfs", digest.Hex)
		if _, err := os.Stat(out.rootfs); errors.Is(err, os.ErrNotExist) {
			if err := unpackImage(blobs, out.rootfs); err != nil {
				return nil, fmt.Errorf("pull %s: unpack: %w", ref, err)
			}
			unpacked = true
		} else if err != nil {
			return nil, err
		}
	}
	p.log.Info("image pulled", "ref", ref, "digest", out.digest, "layers", len(layers),
		"layersDownloaded", fetched, "bytesDownloaded", fetchedBytes, "unpacked", unpacked, "hostRoot", use.Root,
		"downloadSeconds", downloaded.Seconds(), "seconds", time.Since(began).Seconds())
	return out, nil
}

// blob is layer l's compressed blob in the cache, downloaded (and its digest checked by
// go-containerregistry's reader) when missing; n is the bytes downloaded (0 on a hit).
func (p *puller) blob(l v1.Layer) (path string, n int64, err error) {
	d, err := l.Digest()
	if err != nil {
		return "", 0, fmt.Errorf("layer digest: %w", err)
	}
	if d.Algorithm != "sha256" {
		return "", 0, fmt.Errorf("layer %s: only sha256 digests", d)
	}
	path = filepath.Join(p.dir, "blobs", "sha256", d.Hex)
	if _, err := os.Stat(path); err == nil {
		return path, 0, nil
	}
	rc, err := l.Compressed()
	if err != nil {
		return "", 0, fmt.Errorf("layer %s: %w", d, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), d.Hex+".tmp-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	n, err = io.Copy(tmp, rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rc.Close() // the verifying reader reports a digest mismatch at EOF or Close
	}
	if err != nil {
		return "", 0, fmt.Errorf("layer %s: download: %w", d, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", 0, err
	}
	return path, n, nil
}

// unpackImage applies the gzipped tar layers in order to a fresh folder dest: written
// beside it and renamed into place when complete, so a half-unpacked image is never used.
func unpackImage(blobs []string, dest string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dest), filepath.Base(dest)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, b := range blobs {
		if err := applyLayer(b, tmp); err != nil {
			return fmt.Errorf("layer %s: %w", filepath.Base(b), err)
		}
	}
	return os.Rename(tmp, dest)
}

// applyLayer unpacks one gzipped tar layer over root: regular files, folders, symbolic and
// hard links, with their modes and owners; whiteouts (.wh.NAME, .wh..wh..opq) remove what
// lower layers put there. Entries whose path leaves root, or that would be written through
// a symbolic link, are refused.
func applyLayer(blob, root string) error {
	f, err := os.Open(blob)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzipReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel := path.Clean("/" + h.Name)
		if rel == "/" {
			continue
		}
		if h.Name != "" && (strings.HasPrefix(path.Clean(h.Name), "../") || path.Clean(h.Name) == "..") {
			return fmt.Errorf("entry %q leaves the root file system", h.Name)
		}
		dir, base := path.Split(rel)
		if err := noLinkIn(root, dir); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		target := filepath.Join(root, filepath.FromSlash(rel))
		if base == ".wh..wh..opq" {
			entries, err := os.ReadDir(filepath.Dir(target))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			for _, e := range entries {
				if err := os.RemoveAll(filepath.Join(filepath.Dir(target), e.Name())); err != nil {
					return err
				}
			}
			continue
		}
		if name, ok := strings.CutPrefix(base, ".wh."); ok {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(target), name)); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode) & os.ModePerm
		switch h.Typeflag {
		case tar.TypeDir:
			if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
				if err := os.RemoveAll(target); err != nil {
					return err
				}
			}
			if err := os.Mkdir(target, mode); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		case tar.TypeReg:
			if err := os.RemoveAll(target); err != nil {
				return err
			}
			w, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.RemoveAll(target); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			src := path.Clean("/" + h.Linkname)
			sdir, _ := path.Split(src)
			if err := noLinkIn(root, sdir); err != nil {
				return fmt.Errorf("hard link %q to %q: %w", h.Name, h.Linkname, err)
			}
			if err := os.RemoveAll(target); err != nil {
				return err
			}
			if err := os.Link(filepath.Join(root, filepath.FromSlash(src)), target); err != nil {
				return err
			}
		default:
			continue // devices and fifos: a container gets its own /dev
		}
		if h.Typeflag != tar.TypeSymlink {
			// Mode bits beyond the permissions (sticky /tmp, setuid) and owners as written.
			if err := os.Chmod(target, mode|tarModeBits(h.Mode)); err != nil {
				return err
			}
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil && !errors.Is(err, os.ErrPermission) {
			return err
		}
	}
}

// tarModeBits are the setuid, setgid and sticky bits of a tar header's mode.
func tarModeBits(m int64) os.FileMode {
	var out os.FileMode
	if m&0o4000 != 0 {
		out |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		out |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		out |= os.ModeSticky
	}
	return out
}

// noLinkIn checks that no folder of dir (a slash path from the root) is a symbolic link
// inside root, so that writing below dir stays inside root.
func noLinkIn(root, dir string) error {
	cur := root
	for _, part := range strings.Split(strings.Trim(dir, "/"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: a layer writes through it", strings.TrimPrefix(cur, root))
		}
	}
	return nil
}

// gzipReader reads a layer blob: gzipped (the usual media type), else a plain tar.
func gzipReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}
