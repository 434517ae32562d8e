package argo

import (
	"fmt"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// UsageError is LauncherPlan's error when the step or iteration asked for
// is not one the pipeline has (a problem of the request, not of the file).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// LauncherPlan returns every argument the compiled launcher pod of the
// distributed step named stepName would get, --distributed included (see
// LauncherArgs), for run (and iteration, 0-based, of a loop step) with the
// pipeline's parameter values (Pipeline.ResolveParams) and the cluster
// settings of opts, as compile takes them.
func LauncherPlan(p *pipeline.Pipeline, stepName, iteration, run string, values map[string]string, opts Options) (wire.Args, error) {
	var args wire.Args
	if p.Step(stepName) == nil {
		return args, usagef("--step %s: pipeline %s has no such step (steps: %s)", stepName, p.Metadata.Name, p.StepNames())
	}
	sp, err := plan.Build(p, stepName)
	if err != nil {
		return args, fmt.Errorf("step %s: %w", stepName, err)
	}
	if sp.Distributed == nil {
		return args, fmt.Errorf("step %s is not distributed: it runs as one pod, not through pipectl launch", stepName)
	}
	if sp.Loop != nil && iteration == "" {
		return args, usagef("--step %s loops: each iteration has a JobSet of its own; give --iteration I (0-based)", stepName)
	}
	if sp.Loop == nil && iteration != "" {
		return args, usagef("--iteration: step %s does not loop", stepName)
	}
	if args, err = LauncherArgs(p, sp, run, iteration, values); err != nil {
		return args, err
	}
	ls, err := Launch(sp, opts)
	if err != nil {
		return args, err
	}
	args.Distributed, err = wire.Encode(ls)
	return args, err
}
