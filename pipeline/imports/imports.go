// Package imports brings into a run's artifact store the objects its
// artifact params name outside it (KFP's dsl.importer of a Cloud Storage
// or S3 object): before any step runs, each is copied into the store
// (artifacts.Import) and the param's value becomes the URI of that copy,
// which the steps fetch and check by its sha256 as any artifact. The local
// runner and `pipectl run --on argo` (before it submits the workflow) call
// Resolve; validate and compile read nothing.
package imports

import (
	"context"
	"errors"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// Resolve returns params (every parameter's value: Pipeline.ResolveParams)
// with the value of each artifact param of p that names an object outside
// store s (gs://BUCKET/KEY, or s3://BUCKET/KEY not in s) replaced by the
// URI of its copy in s. The configuration of every such object is checked
// before any is read: a missing one fails the run before it starts. status
// gets a line per object imported. params itself is left as it is.
func Resolve(ctx context.Context, s artifacts.Store, p *pipeline.Pipeline, params map[string]string, o artifacts.ImportOptions, status func(format string, args ...any)) (map[string]string, error) {
	var names []string
	var errs []error
	for _, name := range p.ParamOrder {
		uri, ok := params[name]
		if !ok || !components.IsArtifact(p.Params[name].Type) {
			continue
		}
		if _, err := artifacts.SplitURI(s, uri); err == nil || artifacts.CheckImportURI(uri) != nil {
			continue // in the store, or not an import (the step reading it says why)
		}
		if err := artifacts.CheckImportConfig(uri, o); err != nil {
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
		uri, meta, err := artifacts.Import(ctx, s, params[name], p.Params[name].Type, o)
		if err != nil {
			return nil, err
		}
		status("Imported %s (param %s, %d bytes, sha256 %s) as %s\n", params[name], name, meta.Size, meta.SHA256, uri)
		out[name] = uri
	}
	return out, nil
}
