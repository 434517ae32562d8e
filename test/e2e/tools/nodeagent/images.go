package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// imageBind is a host file or folder an image provides at Path inside its containers.
type imageBind struct {
	// Host is the file or folder on the host.
	Host string `json:"host"`
	// Path is where the container sees it (absolute).
	Path string `json:"path"`
	// ReadOnly binds it read-only.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// image is what a container of an image sees, since images are never pulled here.
type image struct {
	// Binds are bound into the container before its volume mounts.
	Binds []imageBind `json:"binds,omitempty"`
	// WorkingDir is the container's working directory when the container sets none.
	WorkingDir string `json:"workingDir,omitempty"`
	// Env is the image's ENV (NAME=value); the container's own env wins.
	Env []string `json:"env,omitempty"`
}

// imageCatalogue maps image references (with or without tag) to what they provide.
type imageCatalogue map[string]image

// loadImages reads a catalogue from a JSON file ({"ref": {"binds": [...], ...}}); an empty
// path is an empty catalogue. Every entry is checked: absolute paths, existing hosts,
// NAME=value env.
func loadImages(path string) (imageCatalogue, error) {
	if path == "" {
		return imageCatalogue{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("image catalogue: %w", err)
	}
	var cat imageCatalogue
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cat); err != nil {
		return nil, fmt.Errorf("image catalogue %s: %w", path, err)
	}
	if cat == nil {
		cat = imageCatalogue{}
	}
	return cat, cat.validate()
}

func (c imageCatalogue) validate() error {
	var errs []string
	for ref, img := range c {
		for i, b := range img.Binds {
			if !filepath.IsAbs(b.Path) {
				errs = append(errs, fmt.Sprintf("image %s: binds[%d].path %q is not absolute", ref, i, b.Path))
			}
			if _, err := os.Stat(b.Host); err != nil {
				errs = append(errs, fmt.Sprintf("image %s: binds[%d].host: %v", ref, i, err))
			}
		}
		if img.WorkingDir != "" && !filepath.IsAbs(img.WorkingDir) {
			errs = append(errs, fmt.Sprintf("image %s: workingDir %q is not absolute", ref, img.WorkingDir))
		}
		for i, kv := range img.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				errs = append(errs, fmt.Sprintf("image %s: env[%d] %q is not NAME=value", ref, i, kv))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("image catalogue: %s", strings.Join(errs, "; "))
	}
	return nil
}

// lookup finds ref's entry: the exact reference first, then the reference without its tag
// (and digest). Unknown images give the zero image: nothing bound, no env, no working dir.
func (c imageCatalogue) lookup(ref string) (image, bool) {
	if img, ok := c[ref]; ok {
		return img, true
	}
	if img, ok := c[untagged(ref)]; ok {
		return img, true
	}
	return image{}, false
}

// untagged is an image reference without ":tag" and "@digest" (a registry's ":port" stays).
func untagged(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		ref = ref[:i]
	}
	return ref
}

// imageFor is what a container of image ref sees: the catalogue's entry; else the image
// pulled from the registry (runtime.pullImage pulls it first), with its unpacked root
// file system; else nothing (the host's root, no binds, no env).
func (r *runtime) imageFor(ref string) (img image, rootfs string) {
	if img, ok := r.images.lookup(ref); ok {
		return img, ""
	}
	if pi, ok := r.puller.cached(ref); ok {
		return pi.img, pi.rootfs
	}
	return image{}, ""
}

// pullImage pulls container c's image when it comes from the registry and the catalogue
// does not know it, retrying (ErrImagePull) until it succeeds or the pod is stopped; false
// when the pod was stopped.
func (r *runtime) pullImage(p *podRun, c *corev1.Container) bool {
	if _, ok := r.images.lookup(c.Image); ok || !r.puller.handles(c.Image) {
		return true
	}
	return r.retry(p, func() error {
		_, err := r.puller.pull(p.ctx, c.Image)
		return err
	}, "ErrImagePull")
}
