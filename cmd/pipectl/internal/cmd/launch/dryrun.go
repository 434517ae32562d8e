package launch

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/plan"
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
	var p *objects
	var err error
	if opts.File != "" {
		p, err = planned(opts, ns)
	} else {
		p, err = decode(opts.ExecFlags, opts.Argv, ns, nil)
	}
	if err != nil {
		return err
	}
	objs := []any{clean(p.jobset)}
	if p.podGroup != nil {
		objs = append(objs, p.podGroup.Object)
	}
	return printObjects(opts, objs)
}

// planned builds the objects of step opts.Step of pipeline opts.File from
// its plan, for run opts.Run (DryRunRun without it). The values of upstream
// output parameters are not known before the run: they show as
// "<tasks.TASK.outputs.parameters.OUTPUT>".
func planned(opts *Options, ns string) (*objects, error) {
	sp, exec, err := planStep(opts)
	if err != nil {
		return nil, err
	}
	ls, err := argo.Launch(sp, argo.Options{
		Image: opts.Image, Artifacts: opts.Factory.Root(), AllowNonS3: true, Namespace: opts.Factory.Kube.Namespace,
	})
	if err != nil {
		return nil, err
	}
	return build(ls, sp.Component, sp.Wiring, exec, ns, nil)
}

// planStep loads the pipeline and returns the plan of the distributed step
// opts.Step and the exec flags its ranks would get.
func planStep(opts *Options) (*plan.Step, jobset.ExecArgs, error) {
	var exec jobset.ExecArgs
	overrides, err := pipeline.ParseOverrides(opts.Values)
	if err != nil {
		return nil, exec, cmdutil.FlagErrorf("%v", err)
	}
	pl, err := pipeline.Load(opts.File)
	if err != nil {
		return nil, exec, err
	}
	if pl.Step(opts.Step) == nil {
		var names []string
		for _, s := range pl.Steps {
			names = append(names, s.Name)
		}
		return nil, exec, cmdutil.FlagErrorf("--step %s: pipeline %s has no such step (steps: %s)", opts.Step, pl.Metadata.Name, strings.Join(names, ", "))
	}
	sp, err := plan.Build(pl, opts.Step)
	if err != nil {
		return nil, exec, fmt.Errorf("step %s: %w", opts.Step, err)
	}
	if sp.Distributed == nil {
		return nil, exec, fmt.Errorf("step %s is not distributed: it runs as one pod, not through pipectl launch", opts.Step)
	}
	if sp.Loop != nil && opts.Iteration < 0 {
		return nil, exec, cmdutil.FlagErrorf("--step %s loops: each iteration has a JobSet of its own; give --iteration I (0-based)", opts.Step)
	}
	if sp.Loop == nil && opts.Iteration >= 0 {
		return nil, exec, cmdutil.FlagErrorf("--iteration: step %s does not loop", opts.Step)
	}
	values, err := pl.ResolveParams(overrides)
	if err != nil {
		return nil, exec, err
	}
	exec = jobset.ExecArgs{Run: opts.Run, Params: map[string]string{}, Upstream: map[string]string{}}
	if opts.Iteration >= 0 {
		exec.Iteration = &opts.Iteration
	}
	if exec.Run == "" {
		exec.Run = DryRunRun
	}
	if exec.Component, err = plan.Encode(sp.Component); err != nil {
		return nil, exec, err
	}
	if exec.Step, err = plan.Encode(sp.Wiring); err != nil {
		return nil, exec, err
	}
	for _, name := range sp.Wiring.ParamNames() {
		exec.Params[name] = values[name]
	}
	tasks := argo.TaskNames(pl)
	for _, in := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[in]
		exec.Upstream[in] = "<tasks." + tasks[ref.Step] + ".outputs.parameters." + ref.Output + ">"
	}
	return sp, exec, nil
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
