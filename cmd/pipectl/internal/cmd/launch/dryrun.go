package launch

import (
	"encoding/json"
	"fmt"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
)

// DryRunRun is the run id of a dry run without --run.
const DryRunRun = "dry-run"

// dryRun prints the objects the launcher would create: with -f, for the
// named step of the pipeline as compiled (the launcher pod's own flags, with
// Argo's references filled in), else for the given flags.
func dryRun(opts *Options) error {
	e, argv := opts.ExecFlags, opts.Argv
	ns := opts.Factory.Kube.Namespace
	if opts.File != "" {
		var err error
		if e, err = compiledFlags(opts); err != nil {
			return err
		}
		argv = nil
	}
	if ns == "" {
		ns = "default"
	}
	p, err := makePlan(e, argv, ns, nil)
	if err != nil {
		return err
	}
	objs := []any{clean(p.jobset)}
	if p.podGroup != nil {
		objs = append(objs, p.podGroup.Object)
	}
	return printObjects(opts, objs)
}

// compiledFlags compiles the pipeline and returns the flags the launcher
// pod of the step gets, as Argo would give them for run opts.Run.
func compiledFlags(opts *Options) (ExecFlags, error) {
	overrides, err := pipeline.ParseOverrides(opts.Values)
	if err != nil {
		return ExecFlags{}, cmdutil.FlagErrorf("%v", err)
	}
	pl, err := pipeline.Load(opts.File)
	if err != nil {
		return ExecFlags{}, err
	}
	step := pl.Step(opts.Step)
	if step == nil {
		var names []string
		for _, s := range pl.Steps {
			names = append(names, s.Name)
		}
		return ExecFlags{}, cmdutil.FlagErrorf("--step %s: pipeline %s has no such step (steps: %s)", opts.Step, pl.Metadata.Name, strings.Join(names, ", "))
	}
	if step.Distributed == nil {
		return ExecFlags{}, fmt.Errorf("step %s is not distributed: it runs as one pod, not through pipectl launch", opts.Step)
	}
	if _, err := pl.ResolveParams(overrides); err != nil {
		return ExecFlags{}, err
	}
	wf, err := argo.Compile(pl, argo.Options{
		Image: opts.Image, Artifacts: opts.Factory.Root(), AllowNonS3: true,
		Namespace: opts.Factory.Kube.Namespace, Params: overrides,
	})
	if err != nil {
		return ExecFlags{}, fmt.Errorf("compile %s: %w", opts.File, err)
	}
	run := opts.Run
	if run == "" {
		run = DryRunRun
	}
	task, tmpl, err := launcherTask(wf, opts.Step)
	if err != nil {
		return ExecFlags{}, err
	}
	vars := map[string]string{"workflow.name": run}
	for _, prm := range wf.Spec.Arguments.Parameters {
		if prm.Value != nil {
			vars["workflow.parameters."+prm.Name] = prm.Value.String()
		}
	}
	for _, prm := range task.Arguments.Parameters {
		if prm.Value == nil {
			continue
		}
		v := prm.Value.String()
		if strings.HasPrefix(v, "{{") {
			// An upstream step's output parameter: not known before the run.
			v = "<" + strings.Trim(v, "{}") + ">"
		}
		vars["inputs.parameters."+prm.Name] = v
	}
	var args []string
	for _, a := range tmpl.Container.Args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "{{"+k+"}}", v)
		}
		args = append(args, a)
	}
	var e ExecFlags
	fs := pflag.NewFlagSet("launch", pflag.ContinueOnError)
	addExecFlags(fs, &e)
	if err := fs.Parse(args); err != nil {
		return ExecFlags{}, fmt.Errorf("the compiled launcher's flags: %w", err)
	}
	e.Run = run
	return e, nil
}

// launcherTask finds the DAG task of the step and its launcher template.
func launcherTask(wf *wfv1.Workflow, step string) (*wfv1.DAGTask, *wfv1.Template, error) {
	templates := map[string]*wfv1.Template{}
	var main *wfv1.Template
	for i := range wf.Spec.Templates {
		t := &wf.Spec.Templates[i]
		templates[t.Name] = t
		if t.Name == wf.Spec.Entrypoint {
			main = t
		}
	}
	if main == nil || main.DAG == nil {
		return nil, nil, fmt.Errorf("the compiled workflow has no DAG")
	}
	for i := range main.DAG.Tasks {
		task := &main.DAG.Tasks[i]
		for _, prm := range task.Arguments.Parameters {
			if prm.Name != argo.StepInput || prm.Value == nil {
				continue
			}
			var es components.ExecStep
			if err := components.DecodeSpec(prm.Value.String(), &es); err != nil || es.Step != step {
				continue
			}
			t := templates[task.Template]
			if t == nil || t.Container == nil || len(t.Container.Command) < 2 || t.Container.Command[1] != "launch" {
				return nil, nil, fmt.Errorf("step %s does not run pipectl launch in the compiled workflow", step)
			}
			return task, t, nil
		}
	}
	return nil, nil, fmt.Errorf("step %s: no task in the compiled workflow", step)
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
