package cmdutil

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"pipectl.dev/pipectl/pipeline/images"
)

// ImageFlags pin the images of a compiled workflow (compile, run --on
// argo): --insecure-registry, --default-registry and --image-tags.
type ImageFlags struct {
	// Insecure are registries (HOST[:PORT]) reached over plain HTTP; the
	// environment's images.EnvInsecure adds more.
	Insecure []string
	// KeepTags leaves image references as written (offline compiles).
	KeepTags bool
	// DefaultRegistry (HOST[:PORT]) is where images named without a
	// registry are found.
	DefaultRegistry string
}

// AddImageFlags adds the flags; prefix starts their help (e.g. "--on argo: ").
func AddImageFlags(fl *pflag.FlagSet, o *ImageFlags, prefix string) {
	fl.StringArrayVar(&o.Insecure, "insecure-registry", nil, prefix+"a registry (HOST[:PORT]) reached over plain HTTP when images are pinned (repeatable; also "+images.EnvInsecure+"=HOST,HOST)")
	fl.StringVar(&o.DefaultRegistry, "default-registry", "", prefix+"a registry (HOST[:PORT]) for images named without one: NAME:TAG is pinned as HOST[:PORT]/NAME instead of a Docker Hub name")
	fl.BoolVar(&o.KeepTags, "image-tags", false, prefix+"keep image references as written instead of pinning them to digests through their registries (offline)")
}

// Resolve pins refs through their registries (or keeps them, with
// --image-tags, saying so on ErrOut) and reports each on f's ErrOut.
func (o *ImageFlags) Resolve(ctx context.Context, f *Factory, refs []string) (images.Result, error) {
	insecure := append([]string(nil), o.Insecure...)
	for _, r := range o.Insecure {
		if err := images.CheckRegistry(r); err != nil {
			return images.Result{}, FlagErrorf("--insecure-registry: %v", err)
		}
	}
	if o.DefaultRegistry != "" {
		if err := images.CheckRegistry(o.DefaultRegistry); err != nil {
			return images.Result{}, FlagErrorf("--default-registry: %v", err)
		}
	}
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := images.ParseInsecure(getenv(images.EnvInsecure))
	if err != nil {
		return images.Result{}, err
	}
	insecure = append(insecure, env...)
	res, err := images.Resolve(ctx, refs, images.Options{Insecure: insecure, KeepTags: o.KeepTags, DefaultRegistry: o.DefaultRegistry})
	if err != nil {
		return res, err
	}
	errOut := f.IOStreams.ErrOut
	if res.KeptTags {
		fmt.Fprintf(errOut, "Images kept as tags (--image-tags), not pinned to digests: %s\n", strings.Join(refs, ", "))
		return res, nil
	}
	for _, r := range refs {
		if p := res.Image(r); p != r {
			fmt.Fprintf(errOut, "Image %s: %s\n", r, p)
		}
	}
	return res, nil
}
