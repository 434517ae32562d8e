// Package imports brings into a run's artifact store the objects its
// artifact params name outside it (KFP's dsl.importer of a Cloud Storage
// or S3 object, or of a ModelCar: a model shipped as an OCI image): before
// any step runs, each is copied into the store (Import; an
// image's model folder, images.Extract then ImportDir) and the
// param's value becomes the URI of that copy, which the steps fetch and
// check by its sha256 as any artifact. The local runner and `pipectl run
// --on argo` (before it submits the workflow) call Resolve; validate and
// compile read nothing.
package imports

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/images"
)

// Options are how Resolve reads what it imports.
type Options struct {
	// ImportOptions read gs:// and s3:// (its Getenv reads the
	// environment: os.Getenv when nil).
	ImportOptions
	// Images pull oci:// images; registries named by
	// wire.EnvInsecureRegistries are added to its Insecure.
	Images images.Options
}

// Resolve returns params (every parameter's value: Pipeline.ResolveParams)
// with the value of each artifact param of p that names an object outside
// store s (gs://BUCKET/KEY, or s3://BUCKET/KEY not in s) replaced by the
// URI of its copy in s. The configuration of every such object is checked
// before any is read: a missing one fails the run before it starts. status
// gets a line per object imported. params itself is left as it is.
func Resolve(ctx context.Context, s artifacts.Store, p *pipeline.Pipeline, params map[string]string, o Options, status func(format string, args ...any)) (map[string]string, error) {
	var names []string
	var errs []error
	for _, name := range p.ParamOrder {
		uri, ok := params[name]
		if !ok || !components.IsArtifact(p.Params[name].Type) {
			continue
		}
		if _, err := artifacts.SplitURI(s, uri); err == nil || uris.CheckImportURI(uri) != nil {
			continue // in the store, or not an import (the step reading it says why)
		}
		if err := CheckImportConfig(uri, o.ImportOptions); err != nil {
			errs = append(errs, err)
			continue
		}
		names = append(names, name)
	}
	if err := errors.Join(errs...); err != nil || len(names) == 0 {
		return params, err
	}
	out := make(map[string]string, len(params))
	for k, v := range params {
		out[k] = v
	}
	for _, name := range names {
		uri, meta, err := importOne(ctx, s, params[name], p.Params[name].Type, o)
		if err != nil {
			return nil, err
		}
		status("Imported %s (param %s, %d bytes, sha256 %s) as %s\n", params[name], name, meta.Size, meta.SHA256, uri)
		out[name] = uri
	}
	return out, nil
}

// importOne imports uri into s as an artifact of type typ.
func importOne(ctx context.Context, s artifacts.Store, uri, typ string, o Options) (string, artifacts.Metadata, error) {
	ref, oci := strings.CutPrefix(uri, uris.OCIScheme)
	if !oci {
		return Import(ctx, s, uri, typ, o.ImportOptions)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	iopts := o.Images
	insecure, err := images.ParseInsecure(getenv(wire.EnvInsecureRegistries))
	if err != nil {
		return "", artifacts.Metadata{}, err
	}
	iopts.Insecure = append(append([]string{}, iopts.Insecure...), insecure...)
	if o.TempDir != "" {
		if err := os.MkdirAll(o.TempDir, 0o755); err != nil {
			return "", artifacts.Metadata{}, err
		}
	}
	tmp, err := os.MkdirTemp(o.TempDir, "pipectl-import-")
	if err != nil {
		return "", artifacts.Metadata{}, err
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, images.ModelDir)
	pinned, err := images.Extract(ctx, ref, images.ModelDir, local, iopts)
	if err != nil {
		return "", artifacts.Metadata{}, fmt.Errorf("import %s: %w", uri, err)
	}
	return ImportDir(ctx, s, local, typ, uris.OCIScheme+pinned)
}
