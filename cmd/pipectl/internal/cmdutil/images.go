package cmdutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/images"
)

// ImageFlags pin the images of a compiled workflow (compile, run --on
// argo): --insecure-registry, --default-registry and --image-tags.
type ImageFlags struct {
	// Insecure are registries (HOST[:PORT]) reached over plain HTTP; the
	// environment's wire.EnvInsecureRegistries adds more.
	Insecure []string
	// KeepTags leaves image references as written (offline compiles).
	KeepTags bool
	// DefaultRegistry (HOST[:PORT]) is where images named without a
	// registry are found.
	DefaultRegistry string
}

// AddImageFlags adds the flags; prefix starts their help (e.g. "--on argo: ").
func AddImageFlags(fl *pflag.FlagSet, o *ImageFlags, prefix string) {
	fl.StringArrayVar(&o.Insecure, "insecure-registry", nil, prefix+"a registry (HOST[:PORT]) reached over plain HTTP when images are pinned (repeatable; also "+wire.EnvInsecureRegistries+"=HOST,HOST)")
	fl.StringVar(&o.DefaultRegistry, "default-registry", "", prefix+"a registry (HOST[:PORT]) for images named without one: NAME:TAG is pinned as HOST[:PORT]/NAME instead of a Docker Hub name")
	fl.BoolVar(&o.KeepTags, "image-tags", false, prefix+"keep image references as written instead of pinning them to digests through their registries (offline)")
}

// Resolve pins refs through their registries (or keeps them, with
// --image-tags, saying so on ErrOut) and reports each on f's ErrOut.
func (o *ImageFlags) Resolve(ctx context.Context, f *Factory, refs []string) (images.Result, error) {
	insecure := append([]string(nil), o.Insecure...)
	for _, r := range o.Insecure {
		if err := images.CheckRegistry(r); err != nil {
			return images.Result{}, podutil.FlagErrorf("--insecure-registry: %v", err)
		}
	}
	if o.DefaultRegistry != "" {
		if err := images.CheckRegistry(o.DefaultRegistry); err != nil {
			return images.Result{}, podutil.FlagErrorf("--default-registry: %v", err)
		}
	}
	env, err := images.ParseInsecure(f.Env(wire.EnvInsecureRegistries))
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

// AddPodFlags adds the flags of the pods a compiled workflow runs, bound
// to o (compile, run --on argo): --image, --allow-non-s3,
// --service-account, --launcher-service-account and --s3-secret; prefix
// starts their help.
func AddPodFlags(fl *pflag.FlagSet, o *argo.Options, version, prefix string) {
	fl.StringVar(&o.Image, "image", "pipectl:"+version, prefix+"the pipectl image of the init containers and launcher pods")
	fl.BoolVar(&o.AllowNonS3, "allow-non-s3", false, prefix+"accept an --artifacts root that is not s3:// (every pod must see the same path)")
	fl.StringVar(&o.ServiceAccount, "service-account", "", prefix+"the ServiceAccount of step pods (default: the namespace's default; needs Argo's executor RBAC)")
	fl.StringVar(&o.LauncherServiceAccount, "launcher-service-account", argo.DefaultLauncherServiceAccount, prefix+"the ServiceAccount of the launcher pods of distributed steps")
	fl.StringVar(&o.S3Secret, "s3-secret", "", prefix+"a Secret with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the pods")
	fl.StringVar(&o.PodRuntime, "pod-runtime", wire.PodRuntimeCopy, prefix+"how step pods get pipectl's pod runtime: copy (an init container copies it) or image-volume (the pipectl image mounted read-only; needs Kubernetes image volumes)")
}
