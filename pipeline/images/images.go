package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"pipectl.dev/pipectl/components/wire"
)

// DefaultTimeout bounds the resolution of the images of one command.
const DefaultTimeout = 30 * time.Second

// Options are how Resolve reaches registries.
type Options struct {
	// Insecure are the registries (HOST[:PORT], as in the image
	// reference) reached over plain HTTP.
	Insecure []string
	// KeepTags skips resolution: every reference stays as written and
	// Result.KeptTags says so (offline compiles).
	KeepTags bool
	// DefaultRegistry (HOST[:PORT]), when set, is where a reference that
	// names no registry is found: NAME:TAG is REGISTRY/NAME:TAG, not a
	// Docker Hub name (Qualify). With KeepTags, such a reference becomes
	// REGISTRY/NAME:TAG, unresolved.
	DefaultRegistry string
	// Keychain finds credentials (default authn.DefaultKeychain: the
	// docker config).
	Keychain authn.Keychain
	// Transport carries the requests (default remote.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds the resolution of all the images of one Resolve, or
	// of the one image of a Pin (default DefaultTimeout).
	Timeout time.Duration
}

// Result is what Resolve found.
type Result struct {
	// Pinned maps each reference as written to the reference to use:
	// NAME@sha256:… (a reference already holding a digest maps to
	// itself; with KeepTags, every one does, qualified by
	// Options.DefaultRegistry when one is set).
	Pinned map[string]string
	// KeptTags is true when references were left as written
	// (Options.KeepTags): nothing was resolved, a tag may name another
	// image tomorrow.
	KeptTags bool
}

// Image returns the reference to use for ref: its pinned form, or ref.
func (r Result) Image(ref string) string {
	if p, ok := r.Pinned[ref]; ok {
		return p
	}
	return ref
}

// CheckRegistry checks one registry name (an insecure one, the default
// one): HOST or HOST:PORT, no scheme, no path.
func CheckRegistry(reg string) error {
	if reg == "" || strings.ContainsAny(reg, "/ \t@") || strings.Contains(reg, "://") {
		return fmt.Errorf("registry %q: want HOST or HOST:PORT (no scheme, no path)", reg)
	}
	if _, err := name.NewRegistry(reg, name.StrictValidation); err != nil {
		return fmt.Errorf("registry %q: %v", reg, err)
	}
	return nil
}

// ParseInsecure splits the value of wire.EnvInsecureRegistries into registry names,
// each checked.
func ParseInsecure(v string) ([]string, error) {
	var regs []string
	var errs []error
	for _, r := range strings.Split(v, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if err := CheckRegistry(r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wire.EnvInsecureRegistries, err))
			continue
		}
		regs = append(regs, r)
	}
	return regs, errors.Join(errs...)
}

// Resolve pins every reference of refs (duplicates allowed). A reference
// already holding a digest passes through unchanged without a registry
// call. The references are resolved at once (at most MaxParallel at a
// time) within one Options.Timeout for them all: three images on a
// registry that never answers take one timeout, not three. Every reference
// that cannot be resolved is reported, each error naming the image and its
// registry.
func Resolve(ctx context.Context, refs []string, opts Options) (Result, error) {
	res := Result{Pinned: map[string]string{}, KeptTags: opts.KeepTags}
	if opts.DefaultRegistry != "" {
		if err := CheckRegistry(opts.DefaultRegistry); err != nil {
			return res, fmt.Errorf("default registry: %w", err)
		}
	}
	refs = sorted(refs)
	if opts.KeepTags {
		for _, ref := range refs {
			res.Pinned[ref] = Qualify(ref, opts.DefaultRegistry)
		}
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	pinned, errs := make([]string, len(refs)), make([]error, len(refs))
	sem := make(chan struct{}, MaxParallel)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
			}
			pinned[i], errs[i] = Pin(ctx, Qualify(ref, opts.DefaultRegistry), opts)
		}()
	}
	wg.Wait()
	for i, ref := range refs {
		if errs[i] == nil {
			res.Pinned[ref] = pinned[i]
		}
	}
	return res, errors.Join(errs...)
}

// MaxParallel bounds the images Resolve asks registries for at once.
const MaxParallel = 8

func (opts Options) timeout() time.Duration {
	if opts.Timeout <= 0 {
		return DefaultTimeout
	}
	return opts.Timeout
}

// Pin resolves one reference to NAME@sha256:… through its registry; a
// reference with a digest is returned as it is.
func Pin(ctx context.Context, ref string, opts Options) (string, error) {
	for _, r := range opts.Insecure {
		if err := CheckRegistry(r); err != nil {
			return "", fmt.Errorf("insecure %w", err)
		}
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %v", ref, err)
	}
	if _, ok := parsed.(name.Digest); ok {
		return ref, nil
	}
	reg := parsed.Context().RegistryStr()
	if slices.Contains(opts.Insecure, reg) {
		if parsed, err = name.ParseReference(ref, name.Insecure); err != nil {
			return "", fmt.Errorf("image %q: %v", ref, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	ropts := opts.remote(ctx)
	// The manifest itself, not a HEAD reply: its digest is computed from
	// its bytes, never taken from the registry's Docker-Content-Digest
	// header (a registry could pin any other image).
	d, err := remote.Get(parsed, ropts...)
	if err != nil {
		return "", resolveError(ref, reg, slices.Contains(opts.Insecure, reg), err, ctx.Err())
	}
	sum := sha256.Sum256(d.Manifest)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if d.Digest.String() != digest {
		return "", fmt.Errorf("image %s: registry %s says its digest is %s, but its manifest's is %s: not pinned", ref, reg, d.Digest, digest)
	}
	return Repository(ref) + "@" + digest, nil
}

// Qualify is ref in registry reg when ref names no registry: its first
// path component is a registry only when it holds a "." or a ":" or is
// "localhost", as Docker reads references (pipectl:1 and team/app:1 name
// none, 127.0.0.1:5000/app:1 and r.test/app:1 do). An empty reg, or a ref
// that names a registry, gives ref unchanged.
func Qualify(ref, reg string) string {
	if reg == "" {
		return ref
	}
	if first, _, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	return reg + "/" + ref
}

// Repository is ref as written without its ":tag" and "@digest" (a
// registry's ":port" stays).
func Repository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		ref = ref[:i]
	}
	return ref
}

func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// resolveError says which image could not be resolved at which registry,
// and why, in a user's words.
func resolveError(ref, reg string, insecure bool, err, ctxErr error) error {
	why := err.Error()
	switch {
	case notFound(err):
		why = "no such image or tag"
	case ctxErr != nil:
		why = "no answer in time (" + ctxErr.Error() + ")"
	case strings.Contains(why, "server gave HTTP response to HTTPS client") && !insecure:
		why += fmt.Sprintf(" (a plain-HTTP registry: name it with --insecure-registry %s)", reg)
	}
	return fmt.Errorf("image %s: cannot resolve it to a digest through registry %s: %s (keep tags with --image-tags to compile offline)", ref, reg, why)
}

func sorted(refs []string) []string {
	out := slices.Clone(refs)
	slices.Sort(out)
	return slices.Compact(out)
}

// remote are the registry client's options: ctx, the keychain (the docker
// config's by default) and the transport, when set.
func (opts Options) remote(ctx context.Context) []remote.Option {
	kc := opts.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc)}
	if opts.Transport != nil {
		ropts = append(ropts, remote.WithTransport(opts.Transport))
	}
	return ropts
}
