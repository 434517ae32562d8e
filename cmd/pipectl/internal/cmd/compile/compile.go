// Package compile is `pipectl compile FILE`: a pipeline to an Argo Workflow.
package compile

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/argorun"
)

// Options are the inputs of `pipectl compile`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory

	File    string
	OutFile string
	// Pods are the compiled pods' settings (the flags of AddPodFlags,
	// --namespace and --no-cache; the S3 endpoint and region are set from
	// PodS3Endpoint and the store's flags).
	Pods argo.Options
	// PodS3Endpoint is the endpoint the pods use (default: --s3-endpoint),
	// as on `pipectl run --on argo`.
	PodS3Endpoint string
	Params        []string
	// NoShipCode leaves the components' folders out of the store: the
	// pods run the code in their images.
	NoShipCode bool
	// Images pin the workflow's images to digests (or keep their tags).
	Images cmdutil.ImageFlags
}

// NewCmdCompile returns `pipectl compile`; runF replaces the run function in tests.
func NewCmdCompile(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "compile FILE",
		Short: "Compile a pipeline to an Argo Workflow",
		Long: `Compile a pipeline to an Argo Workflow (argoproj.io/v1alpha1) to commit or
'kubectl create'. Every step pod runs its component's image through 'pipectl exec'
(the pipectl binary is copied in from --image by an init container); a distributed
step runs 'pipectl launch'. Artifacts go to the --artifacts store, under the
workflow's name as the run id. Pipeline params become workflow arguments
(override them with 'argo submit -p'); -p here sets their defaults.

Every image the workflow names (the steps', --image's) is pinned to a digest,
NAME@sha256:..., through its registry (credentials from the docker config;
plain HTTP only for --insecure-registry); --image-tags keeps the tags, for
compiling offline.

The pods reach the store at --s3-endpoint and --s3-region (where the code is
shipped from here, too), or at --pod-s3-endpoint when they see it under
another name, as with 'pipectl run --on argo'.

Nothing from the pipeline is evaluated by Argo: component specs and values travel
encoded. The output is the same for the same input.`,
		Example: `  pipectl compile examples/attrition/pipeline.yaml --artifacts s3://ml-artifacts/runs \
    --s3-secret pipectl-s3 --s3-endpoint http://minio.minio:9000 -o wf.yaml
  kubectl create -f wf.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return compileRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.OutFile, "output", "o", "", "write the workflow to FILE, atomically (default: stdout)")
	cmdutil.AddPodFlags(fl, &opts.Pods, f.Version, "")
	fl.StringVarP(&opts.Pods.Namespace, "namespace", "n", "", "the workflow's namespace")
	fl.StringVar(&opts.PodS3Endpoint, "pod-s3-endpoint", "", "the S3 endpoint the pods use (default: --s3-endpoint)")
	fl.StringArrayVarP(&opts.Params, "param", "p", nil, "a workflow argument's default: -p name=value (repeatable)")
	fl.BoolVar(&opts.Pods.NoCache, "no-cache", false, "run every step, reusing no earlier outputs (each still records its own)")
	fl.BoolVar(&opts.NoShipCode, "no-ship-code", false, "do not pack the components' folders into the store: the pods run the code in their images")
	cmdutil.AddImageFlags(fl, &opts.Images, "")
	return cmd
}

func compileRun(opts *Options) error {
	overrides, err := pipeline.ParseOverrides(opts.Params)
	if err != nil {
		return podutil.FlagErrorf("%v", err)
	}
	p, err := opts.Factory.Load(opts.File)
	if err != nil {
		return err
	}
	aopts := opts.Pods
	aopts.Artifacts, aopts.Params = opts.Factory.Root(), overrides
	// As on `pipectl run --on argo`: --s3-endpoint and --s3-region are the
	// store's (shipping the code goes there) and the pods' unless
	// --pod-s3-endpoint names another endpoint for the pods.
	so := opts.Factory.StoreOptions.S3
	aopts.S3Endpoint, aopts.S3Region = cmp.Or(opts.PodS3Endpoint, so.Endpoint), so.Region
	// Every mistake in the pipeline and the flags is reported before any
	// registry is asked or any code is shipped (Compile is pure and quick).
	if _, err := argo.Compile(p, aopts); err != nil {
		return fmt.Errorf("compile %s: %w", opts.File, err)
	}
	pinned, err := opts.Images.Resolve(context.Background(), opts.Factory, argo.Images(p, aopts))
	if err != nil {
		return fmt.Errorf("compile %s: %w", opts.File, err)
	}
	aopts.Images = pinned.Pinned
	if !opts.NoShipCode {
		// The workflow's pods fetch the components' code from the store.
		ctx := context.Background()
		store, err := opts.Factory.Store(ctx)
		if err != nil {
			return err
		}
		if err := argorun.ShipCode(ctx, store, p, opts.IO.ErrOut); err != nil {
			return fmt.Errorf("compile %s: %w", opts.File, err)
		}
		// The pods are told the bucket's region (given, or as the service
		// reported it): their store asks for no bucket location.
		aopts.S3Region = cmp.Or(aopts.S3Region, artifacts.Region(ctx, store))
	}
	wf, err := argo.Compile(p, aopts)
	if err != nil {
		return fmt.Errorf("compile %s: %w", opts.File, err)
	}
	b, err := argo.Marshal(wf)
	if err != nil {
		return err
	}
	if opts.OutFile == "" || opts.OutFile == "-" {
		_, err = opts.IO.Out.Write(b)
		return err
	}
	if err := writeAtomic(opts.OutFile, b); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Wrote %s: workflow %s* with %d steps, %d templates\n", opts.OutFile, wf.GenerateName, len(p.Steps), len(wf.Spec.Templates)-1)
	return nil
}

// writeAtomic writes b to path through a temporary file renamed into
// place: path is whole or untouched.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
