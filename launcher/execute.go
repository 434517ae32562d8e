package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
	"pipectl.dev/pipectl/pipeline/runview"
	"pipectl.dev/pipectl/pipeline/step"
	"pipectl.dev/pipectl/pipeline/stepcache"
)

// Request is what a launcher pod gets (its exec wire) decoded, with the
// objects it creates for the step: its JobSet and PodGroup (nil without
// one).
type Request struct {
	*step.Request
	Outputs  []components.ProgramIO
	JobSet   *jobsetv1alpha2.JobSet
	PodGroup *unstructured.Unstructured
	// Secret is an mpi step's (jobset.BuildMPISecret; nil for another
	// framework), without the key pair the launcher adds.
	Secret *corev1.Secret
}

// Deadline bounds ctx by the step's timeout, when it has one (the
// cause says so).
func Deadline(ctx context.Context, ls *plan.Launch) (context.Context, context.CancelFunc) {
	d := ls.Timeout.Duration
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("timed out after %s", d))
}

// InPod returns the namespace and the pod (the JobSet's owner) of the
// launcher pod this process runs in, from the downward API's variables
// (empty and nil outside one).
func InPod(getenv func(string) string) (namespace string, owner *jobset.Owner) {
	if name, uid := getenv(wire.EnvPodName), getenv(wire.EnvPodUID); name != "" && uid != "" {
		owner = &jobset.Owner{Name: name, UID: uid}
	}
	return getenv(wire.EnvPodNS), owner
}

// FromWire decodes the launcher's arguments and builds the objects of its
// step in namespace (owned by owner, when set): the JobSet from the launch
// plan, each rank running `pipectl exec --gang` with the launcher's
// arguments, values decoded and encoded again for the rank pods. Its
// errors name the flag at fault.
func FromWire(a wire.Args, namespace string, owner *jobset.Owner) (*Request, error) {
	if a.Distributed == "" {
		return nil, errors.New("--distributed: the launch spec is missing")
	}
	r, err := step.DecodeArgs(a)
	if err != nil {
		return nil, err
	}
	c, err := r.Component.WithArgv(r.Argv)
	if err != nil {
		return nil, fmt.Errorf("--component: %v", err)
	}
	launch, err := namedSecrets(r.Launch, r.Values.Params)
	if err != nil {
		return nil, fmt.Errorf("--distributed: %v", err)
	}
	r.Launch = launch
	rank := wire.Args{
		Run: a.Run, Step: a.Step, Component: a.Component, Iteration: a.Iteration,
		Params: wire.Values(r.Values.Params), Upstream: wire.Values(r.Values.Upstream),
		ArgoStatus: a.ArgoStatus, ArgoFailures: a.ArgoFailures, ArgoSteps: a.ArgoSteps, Argv: a.Argv,
	}
	rank.CheckpointKeep, rank.CheckpointEvery, rank.ResumeFrom = step.CheckpointArgs(&r.Launch.Distributed, a.ResumeFrom)
	o := jobset.BuildOptions{
		Namespace: namespace,
		Step:      r.Name,
		Exec:      rank,
		Command:   append(append([]string{}, c.Command...), c.Args...),
		Owner:     owner,
	}
	js := jobset.BuildJobSet(r.Launch, o)
	return &Request{Request: r, Outputs: c.Outputs, JobSet: js, PodGroup: jobset.BuildPodGroup(r.Launch, o), Secret: jobset.BuildMPISecret(r.Launch, js.Name, o)}, nil
}

// namedSecrets returns the launch plan with the rank pods' Secrets named
// by params named by the params' values.
func namedSecrets(l *plan.Launch, params map[string]string) (*plan.Launch, error) {
	if !slices.ContainsFunc(l.Pod.Secrets, func(s pipeline.Secret) bool { return s.Param() != "" }) {
		return l, nil
	}
	c := *l
	c.Pod.Secrets = slices.Clone(l.Pod.Secrets)
	for i, s := range c.Pod.Secrets {
		if prm := s.Param(); prm != "" {
			name, ok := params[prm]
			if !ok {
				return nil, fmt.Errorf("secret %s: the Secret is named by parameter %q, which --param does not give", s.Env, prm)
			}
			c.Pod.Secrets[i].Secret = name
		}
	}
	return &c, nil
}

// Objects are what the launcher creates for the request, as plain
// objects to print: the JobSet, then the PodGroup when there is one, then
// an mpi step's Secret (its hostfile; the key pair is made at launch and
// never printed).
func (r *Request) Objects() []any {
	objs := []any{plain(r.JobSet)}
	if r.PodGroup != nil {
		objs = append(objs, r.PodGroup.Object)
	}
	if r.Secret != nil {
		objs = append(objs, plain(r.Secret))
	}
	return objs
}

// plain returns the object as a map without status and empty timestamps.
func plain(obj any) map[string]any {
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

// Execute runs the request's step through the step executor with its
// JobSet as the strategy (l runs it; its ErrOut gets the launcher's
// lines): looked up in the step cache first, fingerprinted as `pipectl
// exec` does with the rank pods' image. The launcher's log (its ranks'
// lines) is the step's, kept at <run>/<step>/step.log whatever happens.
// The Step is returned for its timings.
func Execute(ctx context.Context, launcher *Launcher, store artifacts.Store, req *Request, outputParams string) (step.Result, *Step, error) {
	log, err := step.NewLog("")
	if err != nil {
		return step.Result{}, &Step{}, err
	}
	defer log.Close()
	l := *launcher
	l.Out, l.ErrOut = log.Tee(l.Out), log.Tee(l.ErrOut)
	ls, run, name, errOut := req.Launch, req.Values.Run, req.Name, l.ErrOut
	const who = "pipectl launch"
	job := &step.Job{
		Run: run, Name: name, Cache: req.Cache, OutputParams: outputParams,
		Shape: stepcache.Shape{Nodes: ls.Nodes, Procs: ls.ProcsPerNode, Framework: string(ls.Framework)},
		Log:   log, KeepCachedLog: true, Lineage: true,
		Cached: func(hit stepcache.Entry) {
			fmt.Fprintf(errOut, "%s: step %s cached: reusing the outputs of step %s of run %s (no JobSet created)\n", who, name, hit.Step, hit.Run)
			runview.WriteOutputs(errOut, who, hit.Outputs)
		},
		Warnf: func(format string, args ...any) { fmt.Fprintf(errOut, who+": warning: "+format+"\n", args...) },
	}
	js := &Step{
		Launcher: &l, Store: store, RunID: run, Name: name, Launch: ls, JobSet: req.JobSet, PodGroup: req.PodGroup, Secret: req.Secret,
		Outputs: req.Outputs, OutputParams: outputParams, Log: errOut,
		Done: func(records []record.OutputRecord) { runview.WriteOutputs(errOut, who, records) },
	}
	job.Strategy = js
	if job.Cache != wire.CacheOff {
		req.Image = ls.Image
		if job.Invocation, job.InputSums, err = step.Invocation(ctx, store, req.Request); err != nil {
			return step.Result{}, js, err
		}
	}
	res, err := (&step.Executor{Store: store}).Execute(ctx, job)
	return res, js, err
}

// SinceTerminal is how long ago the launcher saw the step's JobSet end
// (false when it did not).
func (s *Step) SinceTerminal() (time.Duration, bool) {
	if s.TerminalAt.IsZero() {
		return 0, false
	}
	return time.Since(s.TerminalAt), true
}
