package launch

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

// DryRunRun is the run id of a dry run without --run.
const DryRunRun = "dry-run"

// dryRun prints the objects the launcher would create: with -f, for the
// named step of the pipeline, from its plan (with the values the compiled
// launcher pod would get for run opts.Run), else for the given flags.
func dryRun(opts *Options) error {
	ns := cmp.Or(opts.Factory.Kube.Namespace, "default")
	args := opts.Args
	if opts.File != "" {
		var err error
		if args, err = planned(opts); err != nil {
			return err
		}
	}
	req, err := launcher.FromWire(args, ns, nil)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	return cmdutil.PrintObjects(opts.IO.Out, opts.Output, req.Objects())
}

// planned returns the arguments the compiled launcher pod of step
// opts.Step of pipeline opts.File would get, for run opts.Run (DryRunRun
// without it), with the parameters opts.Params (-p name=value) as pipectl
// run takes them. The values of upstream output parameters are not known
// before the run: they show as "<tasks.TASK.outputs.parameters.OUTPUT>".
func planned(opts *Options) (wire.Args, error) {
	l, err := cmdutil.LoadRun(context.Background(), opts.Factory, opts.File, opts.Params, "", "")
	if err != nil {
		return wire.Args{}, err
	}
	step := opts.Step
	if step == "" {
		if step, err = onlyDistributed(l.Pipeline); err != nil {
			return wire.Args{}, err
		}
	}
	args, err := argo.LauncherPlan(l.Pipeline, step, opts.Iteration, cmp.Or(opts.Run, DryRunRun), l.Values, argo.Options{
		Image: opts.Image, Artifacts: opts.Factory.Root(), AllowNonS3: true, Namespace: opts.Factory.Kube.Namespace,
	})
	var ue *argo.UsageError
	if errors.As(err, &ue) {
		return args, cmdutil.FlagErrorf("%v", err)
	}
	return args, err
}

// onlyDistributed is the name of p's one distributed step.
func onlyDistributed(p *pipeline.Pipeline) (string, error) {
	var names []string
	for _, s := range p.Steps {
		if s.Distributed != nil {
			names = append(names, s.Name)
		}
	}
	if len(names) != 1 {
		return "", cmdutil.FlagErrorf("--dry-run -f needs --step STEP: %s has %d distributed steps (%s)", p.Source, len(names), strings.Join(names, ", "))
	}
	return names[0], nil
}
