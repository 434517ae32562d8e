package cmdutil

import (
	"context"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/progress"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/runstore"
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
	if f.ArtifactsRoot != "" {
		return f.ArtifactsRoot
	}
	if r := f.Env(wire.EnvRoot); r != "" {
		return r
	}
	return artifacts.DefaultRoot
}

// Progress returns ctx with progress bars for large transfers when ErrOut
// is a terminal (nothing otherwise).
func (f *Factory) Progress(ctx context.Context) context.Context {
	return artifacts.WithProgress(ctx, progress.Terminal(f.IOStreams.ErrOut))
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
	if f.Version != "dev" {
		return f.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return f.Version
}
