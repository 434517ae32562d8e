// Package modelcartest builds ModelCar images for tests (KFP's oci://
// model artifacts: a model shipped as an OCI image, its files in /models)
// and pushes them to a registry.
package modelcartest

import (
	"archive/tar"
	"bytes"
	"io"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Layer is a layer holding files (text by path, without a leading /);
// a path ending in / is a folder, and an empty text under a name
// .wh.NAME deletes NAME of the layers below (an OCI whiteout).
func Layer(files map[string]string) (v1.Layer, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		h := &tar.Header{Name: p, Mode: 0o644, Size: int64(len(files[p])), Typeflag: tar.TypeReg}
		if p[len(p)-1] == '/' {
			h = &tar.Header{Name: p, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, files[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// Push writes an image of the layers (files as Layer takes them, the first
// the lowest) to ref and returns its digest.
func Push(ref string, layers []map[string]string, opts ...name.Option) (string, error) {
	img := empty.Image
	for _, files := range layers {
		l, err := Layer(files)
		if err != nil {
			return "", err
		}
		if img, err = mutate.AppendLayers(img, l); err != nil {
			return "", err
		}
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return "", err
	}
	if err := remote.Write(r, img); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}
