package cmdutil

import (
	"context"
	"os"
	"sync"

	"pipectl.dev/pipectl/artifacts"
)

// Factory builds the dependencies commands share, lazily: a command that
// does not touch the artifact store never opens it.
type Factory struct {
	IOStreams *IOStreams
	// Version is pipectl's version.
	Version string
	// ArtifactsRoot is the --artifacts flag (empty: $PIPECTL_ARTIFACTS, then the default).
	ArtifactsRoot string
	// StoreOptions are the store flags (S3 endpoint and credentials).
	StoreOptions artifacts.Options
	// Getenv reads the environment (os.Getenv by default).
	Getenv func(string) string
	// Kube are the cluster flags (see AddKubeFlags).
	Kube KubeFlags
	// KubeClientsFunc, when set, replaces Clients (tests: fake clientsets).
	KubeClientsFunc func() (*KubeClients, error)

	once  sync.Once
	store artifacts.Store
	err   error
	kube  kubeState
}

// Root returns the artifact store root in effect.
func (f *Factory) Root() string {
	if f.ArtifactsRoot != "" {
		return f.ArtifactsRoot
	}
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if r := getenv(artifacts.EnvRoot); r != "" {
		return r
	}
	return artifacts.DefaultRoot
}

// Progress returns ctx with progress bars for large transfers when ErrOut
// is a terminal (nothing otherwise).
func (f *Factory) Progress(ctx context.Context) context.Context {
	return artifacts.WithProgress(ctx, artifacts.TerminalProgress(f.IOStreams.ErrOut))
}

// Store opens the artifact store once.
func (f *Factory) Store(ctx context.Context) (artifacts.Store, error) {
	f.once.Do(func() {
		f.store, f.err = artifacts.Open(ctx, f.Root(), f.StoreOptions)
	})
	return f.store, f.err
}
