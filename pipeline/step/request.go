package step

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/plan"
)

// Request is what Args ask for, decoded: one step (or one iteration of a
// loop step) of a run.
type Request struct {
	// Component and Wiring are the step's plan.
	Component *components.Program
	Wiring    *plan.Wiring
	// Launch is the launch plan of a distributed step (with --distributed).
	Launch *plan.Launch
	// Values are the run-time values: the run, parameters, upstream output
	// parameters, the iteration and a finally step's run fields.
	Values plan.Values
	// Name is the step's name in the run record: STEP, or STEP[i] for an
	// iteration.
	Name string
	// Cache is the step cache's mode.
	Cache wire.CacheMode
	// Image is the step's image (exec's --image).
	Image string
	// Argv, when set, replaces the component's command and args.
	Argv []string
	// Checkpoint is how a distributed step's checkpoint directory is kept
	// (--checkpoint-keep, --checkpoint-every, --resume-from).
	Checkpoint checkpoint.Options
}

// DecodeArgs checks and decodes a, the wire of `pipectl exec` and
// `pipectl launch`, every problem named by its flag.
func DecodeArgs(a wire.Args) (*Request, error) {
	var errs []error
	r := &Request{Values: plan.Values{Run: a.Run, ScheduledTime: a.ScheduledTime}, Image: a.Image, Argv: a.Argv}
	var err error
	if r.Component, err = plan.DecodeComponent(a.Component); err != nil {
		errs = append(errs, err)
	}
	if r.Wiring, err = plan.DecodeWiring(a.Step); err != nil {
		errs = append(errs, err)
	}
	if a.Distributed != "" {
		if r.Launch, err = plan.DecodeLaunch(a.Distributed); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Values.Params, err = values("--param", a.Params); err != nil {
		errs = append(errs, err)
	}
	if r.Values.Upstream, err = values("--upstream", a.Upstream); err != nil {
		errs = append(errs, err)
	}
	if r.Cache, err = wire.ParseCacheMode(cmp.Or(a.Cache, string(wire.CacheOff))); err != nil {
		errs = append(errs, fmt.Errorf("--cache: %v", err))
	}
	if a.Iteration != "" {
		i, err := strconv.Atoi(a.Iteration)
		if err != nil || i < 0 {
			errs = append(errs, fmt.Errorf("--iteration %q: expected a 0-based index", a.Iteration))
		}
		r.Values.Iteration = &i
	}
	if a.ArgoSteps != "" {
		if r.Values.RunFields, err = RunFields(a.ArgoStatus, a.ArgoFailures, a.ArgoSteps); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Checkpoint, err = checkpointOptions(a); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r.Name = r.Wiring.Step
	if i := r.Values.Iteration; i != nil {
		r.Name = pipeline.IterationName(r.Wiring.Step, *i)
	}
	return r, nil
}

// checkpointOptions reads --checkpoint-keep, --checkpoint-every and
// --resume-from.
func checkpointOptions(a wire.Args) (checkpoint.Options, error) {
	o := checkpoint.Options{From: a.ResumeFrom}
	var errs []error
	if a.CheckpointKeep != "" {
		n, err := strconv.Atoi(a.CheckpointKeep)
		if err != nil || n < 1 || n > checkpoint.MaxKeep {
			errs = append(errs, fmt.Errorf("--checkpoint-keep %q: expected 1 to %d checkpoints kept", a.CheckpointKeep, checkpoint.MaxKeep))
		}
		o.Keep = n
	}
	if a.CheckpointEvery != "" {
		d, err := time.ParseDuration(a.CheckpointEvery)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("--checkpoint-every %q: expected a positive duration such as 5m", a.CheckpointEvery))
		}
		o.Every = d
	}
	return o, errors.Join(errs...)
}

// CheckpointArgs are the flags that give a rank pod its step's
// distributed.checkpoint (d) and the run it resumes from.
func CheckpointArgs(d *plan.Distributed, resumeFrom string) (keep, every, from string) {
	if d.CheckpointKeep > 0 {
		keep = strconv.Itoa(d.CheckpointKeep)
	}
	if d.CheckpointEvery.Duration > 0 {
		every = d.CheckpointEvery.String()
	}
	return keep, every, resumeFrom
}

// values reads repeated NAME=VALUE flags (named flag in messages) whose
// values are in Value's encoding, decoding each.
func values(flag string, flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, raw, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s %q: expected NAME=VALUE", flag, f)
		}
		v, err := wire.DecodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, name, err)
		}
		out[name] = v
	}
	return out, nil
}
