package podutil

import (
	"context"
	"os"
	"runtime/debug"
	"sync"

	"github.com/spf13/pflag"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/progress"
	"pipectl.dev/pipectl/components/wire"
)

// Env is what the pod commands (exec; launch, with podkube.Env) take from
// a factory: the full CLI's cmdutil.Factory and the pod runtime's Factory
// both are one.
type Env interface {
	// Streams are the command's standard streams.
	Streams() *IOStreams
	// PipectlVersion is pipectl's version, as linked.
	PipectlVersion() string
	// Env reads an environment variable.
	Env(name string) string
	// Root is the artifact store root in effect.
	Root() string
	// Store opens the artifact store once.
	Store(ctx context.Context) (artifacts.Store, error)
}

// Factory is the pod runtime's Env: the store, opened lazily.
type Factory struct {
	IOStreams *IOStreams
	// Version is pipectl's version.
	Version string
	// ArtifactsRoot is the --artifacts flag (empty: $PIPECTL_ARTIFACTS, then the default).
	ArtifactsRoot string
	// StoreOptions are the store flags (S3 endpoint and credentials).
	StoreOptions artifacts.Options
	// Getenv reads the environment (os.Getenv when nil; tests set it).
	Getenv func(string) string

	once  sync.Once
	store artifacts.Store
	err   error
}

// Streams returns f.IOStreams.
func (f *Factory) Streams() *IOStreams { return f.IOStreams }

// PipectlVersion returns f.Version.
func (f *Factory) PipectlVersion() string { return f.Version }

// Env reads the environment variable name.
func (f *Factory) Env(name string) string {
	if f.Getenv != nil {
		return f.Getenv(name)
	}
	return os.Getenv(name)
}

// Root returns the artifact store root in effect.
func (f *Factory) Root() string { return StoreRoot(f.ArtifactsRoot, f.Env) }

// Store opens the artifact store once.
func (f *Factory) Store(ctx context.Context) (artifacts.Store, error) {
	f.once.Do(func() {
		f.store, f.err = artifacts.Open(ctx, f.Root(), f.StoreOptions)
	})
	return f.store, f.err
}

// StoreRoot is the artifact store root in effect: flag, else
// $PIPECTL_ARTIFACTS (read with env), else the default.
func StoreRoot(flag string, env func(string) string) string {
	if flag != "" {
		return flag
	}
	if r := env(wire.EnvRoot); r != "" {
		return r
	}
	return artifacts.DefaultRoot
}

// Progress returns ctx with progress bars for large transfers when errOut
// is a terminal (nothing otherwise).
func Progress(ctx context.Context, ios *IOStreams) context.Context {
	return artifacts.WithProgress(ctx, progress.Terminal(ios.ErrOut))
}

// FullVersion is version, or for a development build ("dev") dev- and the
// first 12 digits of the commit it was built from, when Go recorded it.
func FullVersion(version string) string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return version
}

// AddStoreFlags registers the global store flags (--artifacts, --s3-*) on fl.
func AddStoreFlags(fl *pflag.FlagSet, root *string, opts *artifacts.Options) {
	fl.StringVar(root, "artifacts", "", "artifact store root: a directory, file:///path or s3://bucket/prefix (default $PIPECTL_ARTIFACTS, then ./.pipectl)")
	fl.StringVar(&opts.S3.Endpoint, "s3-endpoint", "", "S3 endpoint for s3:// stores: host:port or https://… (TLS), http://… (plain) (default $AWS_ENDPOINT_URL)")
	fl.StringVar(&opts.S3.Region, "s3-region", "", "S3 region (default $AWS_REGION)")
	fl.BoolVar(&opts.S3.Insecure, "s3-insecure", false, "skip TLS certificate verification for the S3 endpoint")
}
