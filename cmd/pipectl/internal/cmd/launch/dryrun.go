package launch

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/wire"
)

// DryRunRun is the run id of a dry run without --run.
const DryRunRun = "dry-run"

// dryRun prints the objects the launcher would create: with -f, for the
// named step of the pipeline, from its plan (with the values the compiled
// launcher pod would get for run opts.Run), else for the given flags.
func dryRun(opts *Options) error {
	ns := opts.Factory.Kube.Namespace
	if ns == "" {
		ns = "default"
	}
	args := opts.Args
	if opts.File != "" {
		var err error
		if args, err = planned(opts); err != nil {
			return err
		}
	}
	p, err := decode(args, ns, nil)
	if err != nil {
		return err
	}
	objs := []any{clean(p.jobset)}
	if p.podGroup != nil {
		objs = append(objs, p.podGroup.Object)
	}
	return printObjects(opts, objs)
}

// planned returns the arguments the compiled launcher pod of step
// opts.Step of pipeline opts.File would get, for run opts.Run (DryRunRun
// without it). The values of upstream output parameters are not known
// before the run: they show as "<tasks.TASK.outputs.parameters.OUTPUT>".
func planned(opts *Options) (wire.Args, error) {
	sp, args, err := planStep(opts)
	if err != nil {
		return args, err
	}
	ls, err := argo.Launch(sp, argo.Options{
		Image: opts.Image, Artifacts: opts.Factory.Root(), AllowNonS3: true, Namespace: opts.Factory.Kube.Namespace,
	})
	if err != nil {
		return args, err
	}
	args.Distributed, err = plan.Encode(ls)
	return args, err
}

// planStep loads the pipeline and returns the plan of the distributed step
// opts.Step and the arguments of its launcher but --distributed, with the
// parameters opts.Params (-p name=value) as pipectl run takes them.
func planStep(opts *Options) (*plan.Step, wire.Args, error) {
	var args wire.Args
	overrides, err := pipeline.ParseOverrides(opts.Params)
	if err != nil {
		return nil, args, cmdutil.FlagErrorf("%v", err)
	}
	pl, err := pipeline.Load(opts.File)
	if err != nil {
		return nil, args, err
	}
	if pl.Step(opts.Step) == nil {
		var names []string
		for _, s := range pl.Steps {
			names = append(names, s.Name)
		}
		return nil, args, cmdutil.FlagErrorf("--step %s: pipeline %s has no such step (steps: %s)", opts.Step, pl.Metadata.Name, strings.Join(names, ", "))
	}
	sp, err := plan.Build(pl, opts.Step)
	if err != nil {
		return nil, args, fmt.Errorf("step %s: %w", opts.Step, err)
	}
	if sp.Distributed == nil {
		return nil, args, fmt.Errorf("step %s is not distributed: it runs as one pod, not through pipectl launch", opts.Step)
	}
	if sp.Loop != nil && opts.Iteration == "" {
		return nil, args, cmdutil.FlagErrorf("--step %s loops: each iteration has a JobSet of its own; give --iteration I (0-based)", opts.Step)
	}
	if sp.Loop == nil && opts.Iteration != "" {
		return nil, args, cmdutil.FlagErrorf("--iteration: step %s does not loop", opts.Step)
	}
	values, err := pl.ResolveParams(overrides)
	if err != nil {
		return nil, args, err
	}
	run := opts.Run
	if run == "" {
		run = DryRunRun
	}
	args, err = argo.LauncherArgs(pl, sp, run, opts.Iteration, values)
	return sp, args, err
}

// clean returns the object as a map without status and empty timestamps.
func clean(obj any) map[string]any {
	b, _ := json.Marshal(obj)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	stripNullTimestamps(m)
	return m
}

func stripNullTimestamps(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "creationTimestamp" && x == nil {
				delete(t, k)
				continue
			}
			if x == nil {
				continue
			}
			stripNullTimestamps(x)
		}
	case []any:
		for _, x := range t {
			stripNullTimestamps(x)
		}
	}
}

// printObjects prints one object, or a List of several (several YAML
// documents with -o yaml).
func printObjects(opts *Options, objs []any) error {
	w := opts.IO.Out
	if opts.Output == cmdutil.FormatJSON {
		var v any = objs[0]
		if len(objs) > 1 {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
