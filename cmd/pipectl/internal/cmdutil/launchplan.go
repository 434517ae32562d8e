package cmdutil

import (
	"context"
	"errors"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/argo"
)

// LauncherPlan returns the arguments the compiled launcher pod of step
// stepName (iteration, "" when none) of the pipeline file would get, for
// run, with params (-p name=value) as pipectl run takes them and image as
// the pipectl image (pipectl launch --dry-run -f; the pod runtime, which
// links no compiler, has no such method).
func (f *Factory) LauncherPlan(file string, params []string, stepName, iteration, run, image string) (wire.Args, error) {
	l, err := LoadRun(context.Background(), f, file, params, "", "")
	if err != nil {
		return wire.Args{}, err
	}
	args, err := argo.LauncherPlan(l.Pipeline, stepName, iteration, run, l.Values, argo.Options{
		Image: image, Artifacts: f.Root(), AllowNonS3: true, Namespace: f.Kube.Namespace,
	})
	var ue *argo.UsageError
	if errors.As(err, &ue) {
		return args, FlagErrorf("%v", err)
	}
	return args, err
}
