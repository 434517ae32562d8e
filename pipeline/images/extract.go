package images

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
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
	if err := untarDir(tar.NewReader(rc), dir, dest); err != nil {
		return "", fmt.Errorf("image %s: %w", pinned, err)
	}
	return pinned, nil
}

// untarDir writes the entries of tr below dir to dest.
func untarDir(tr *tar.Reader, dir, dest string) error {
	found := false
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/"))
		if p == dir {
			found = found || h.Typeflag == tar.TypeDir
			continue
		}
		rel, below := strings.CutPrefix(p, dir+"/")
		if !below {
			continue
		}
		found = true
		target := filepath.Join(dest, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return fmt.Errorf("/%s: %w", p, err)
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("/%s is not a regular file or a folder (tar type %q): only those are imported", p, h.Typeflag)
		}
	}
	if !found {
		return fmt.Errorf("no folder /%s (a ModelCar image keeps its model there)", dir)
	}
	return nil
}
