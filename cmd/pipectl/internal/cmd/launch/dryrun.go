package launch

import (
	"cmp"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher"
)

// DryRunRun is the run id of a dry run without --run.
const DryRunRun = "dry-run"

// Planner is a factory that compiles a pipeline file's launcher pod (the
// full CLI's; the pod runtime links no compiler).
type Planner interface {
	LauncherPlan(file string, params []string, stepName, iteration, run, image string) (wire.Args, error)
}

// dryRun prints the objects the launcher would create: with -f, for the
// named step of the pipeline, from its plan (with the values the compiled
// launcher pod would get for run opts.Run), else for the given flags.
func dryRun(opts *Options) error {
	ns := cmp.Or(opts.Factory.KubeFlags().Namespace, "default")
	args := opts.Args
	if opts.File != "" {
		var err error
		if args, err = planned(opts); err != nil {
			return err
		}
		args.ResumeFrom = opts.ResumeFrom
	}
	req, err := launcher.FromWire(args, ns, nil)
	if err != nil {
		return podutil.FlagErrorf("%v", err)
	}
	return podutil.PrintObjects(opts.IO.Out, opts.Output, req.Objects())
}

// planned returns the arguments the compiled launcher pod of step
// opts.Step of pipeline opts.File would get, for run opts.Run (DryRunRun
// without it), with the parameters opts.Params (-p name=value) as pipectl
// run takes them. The values of upstream output parameters are not known
// before the run: they show as "<tasks.TASK.outputs.parameters.OUTPUT>".
func planned(opts *Options) (wire.Args, error) {
	p, ok := opts.Factory.(Planner)
	if !ok {
		return wire.Args{}, podutil.FlagErrorf("--dry-run -f: this binary is pipectl's pod runtime, which compiles no pipeline: run pipectl launch --dry-run -f")
	}
	return p.LauncherPlan(opts.File, opts.Params, opts.Step, opts.Iteration, cmp.Or(opts.Run, DryRunRun), opts.Image)
}
