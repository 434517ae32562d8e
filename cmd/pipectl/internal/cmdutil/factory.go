package cmdutil

import (
	"context"
	"io"
	"os"
	"sync"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/runstore"
)

// Factory builds the dependencies commands share, lazily: a command that
// does not touch the artifact store never opens it.
type Factory struct {
	IOStreams *podutil.IOStreams
	// Version is pipectl's version.
	Version string
	// ArtifactsRoot is the --artifacts flag (empty: $PIPECTL_ARTIFACTS, then the default).
	ArtifactsRoot string
	// StoreOptions are the store flags (S3 endpoint and credentials).
	StoreOptions artifacts.Options
	// Runtimes are the --runtimes flags: Kubeflow Trainer runtime files or
	// folders whose runtimes steps (distributed.runtime) and TrainJobs name.
	Runtimes []string
	// ClusterRuntimes looks the runtimes no --runtimes file gives up in the
	// cluster (its ClusterTrainingRuntimes and TrainingRuntimes): set for
	// runs on the cluster.
	ClusterRuntimes bool
	// Getenv reads the environment (os.Getenv by default).
	Getenv func(string) string
	// Kube are the cluster flags (see AddKubeFlags).
	Kube KubeFlags
	// KubeClientsFunc, when set, replaces Clients (tests: fake clientsets).
	KubeClientsFunc func() (*argorun.Clients, error)

	once  sync.Once
	store artifacts.Store
	err   error
	kube  kubeState
}

// Env reads the environment variable name (through Getenv when set).
func (f *Factory) Env(name string) string {
	if f.Getenv != nil {
		return f.Getenv(name)
	}
	return os.Getenv(name)
}

// Root returns the artifact store root in effect.
func (f *Factory) Root() string {
	return podutil.StoreRoot(f.ArtifactsRoot, f.Env)
}

// Progress returns ctx with progress bars for large transfers when ErrOut
// is a terminal (nothing otherwise).
func (f *Factory) Progress(ctx context.Context) context.Context {
	return podutil.Progress(ctx, f.IOStreams)
}

// Store opens the artifact store once.
func (f *Factory) Store(ctx context.Context) (artifacts.Store, error) {
	f.once.Do(func() {
		f.store, f.err = artifacts.Open(ctx, f.Root(), f.StoreOptions)
	})
	return f.store, f.err
}

// Runs returns a reader of the run records in the store, which refreshes
// running cluster runs through the factory's clients; warn receives the
// notes about runs that could not be refreshed.
func (f *Factory) Runs(ctx context.Context, warn io.Writer) (*runstore.Reader, error) {
	store, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	return runstore.New(f.Clients, store, warn), nil
}

// FullVersion is Version, or for a development build ("dev") dev- and the
// first 12 digits of the commit it was built from, when Go recorded it.
func (f *Factory) FullVersion() string {
	return podutil.FullVersion(f.Version)
}

// Streams returns f.IOStreams (podutil.Env).
func (f *Factory) Streams() *podutil.IOStreams { return f.IOStreams }

// PipectlVersion returns f.Version (podutil.Env).
func (f *Factory) PipectlVersion() string { return f.Version }

// KubeFlags returns &f.Kube (podutil.Env).
func (f *Factory) KubeFlags() *KubeFlags { return &f.Kube }
