package images

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"pipectl.dev/pipectl/components/untar"
)

// ModelDir is the folder of a ModelCar image (KFP's oci:// model
// artifact: a model shipped as an OCI image) that holds the model.
const ModelDir = "models"

// Extract pulls image ref (for linux/amd64 when it is a multi-platform
// index) and writes the files below folder dir of its file system (its
// layers applied in order, whiteouts included) to the new folder dest. It
// returns the image's reference by digest. Regular files and folders are
// written; any other entry below dir (a link, a device) is an error, as is
// an image with no such folder.
func Extract(ctx context.Context, ref, dir, dest string, opts Options) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %v", ref, err)
	}
	reg := parsed.Context().RegistryStr()
	insecure := slices.Contains(opts.Insecure, reg)
	if insecure {
		if parsed, err = name.ParseReference(ref, name.Insecure); err != nil {
			return "", fmt.Errorf("image %q: %v", ref, err)
		}
	}
	img, err := remote.Image(parsed, opts.remote(ctx)...)
	if err != nil {
		return "", resolveError(ref, reg, insecure, err, ctx.Err())
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	pinned := Repository(ref) + "@" + digest.String()
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untarDir(ctx, rc, dir, dest); err != nil {
		return "", fmt.Errorf("image %s: %w", pinned, err)
	}
	return pinned, nil
}

// untarDir writes the entries of the archive r below dir to dest (an
// untrusted archive: package untar's rules, no links).
func untarDir(ctx context.Context, r io.Reader, dir, dest string) error {
	found := false
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	// An image's file system is big: its entries and bytes are bounded
	// far above a model's, names as any archive's.
	lim := untar.Limits{MaxEntries: 10_000_000, MaxBytes: 1 << 50, Rooted: true}
	err := untar.NewReader(ctx, r, lim).Extract(dest, untar.Options{
		Select: func(h *tar.Header, p string) (string, bool) {
			if p == dir {
				found = found || h.Typeflag == tar.TypeDir
				return ".", true
			}
			rel, below := strings.CutPrefix(p, dir+"/")
			found = found || below
			return rel, below
		},
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no folder /%s (a ModelCar image keeps its model there)", dir)
	}
	return nil
}
