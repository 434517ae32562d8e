package cmdutil

import (
	"context"
	"errors"
	"strings"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
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
	if stepName == "" {
		if stepName, err = onlyDistributed(l.Pipeline); err != nil {
			return wire.Args{}, err
		}
	}
	args, err := argo.LauncherPlan(l.Pipeline, stepName, iteration, run, l.Values, argo.Options{
		Image: image, Artifacts: f.Root(), AllowNonS3: true, Namespace: f.Kube.Namespace,
	})
	var ue *argo.UsageError
	if errors.As(err, &ue) {
		return args, podutil.FlagErrorf("%v", err)
	}
	return args, err
}

// onlyDistributed is the name of p's one distributed step (what launch
// --dry-run -f takes when no --step names one: a TrainJob has one).
func onlyDistributed(p *pipeline.Pipeline) (string, error) {
	var names []string
	for _, s := range p.Steps {
		if s.Distributed != nil {
			names = append(names, s.Name)
		}
	}
	if len(names) != 1 {
		return "", podutil.FlagErrorf("--dry-run -f needs --step STEP: %s has %d distributed steps (%s)", p.Source, len(names), strings.Join(names, ", "))
	}
	return names[0], nil
}
