package wire

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Args are the arguments of `pipectl exec` and `pipectl launch` as they
// stand in a pod: the compiler writes them into step and launcher pods
// (with Argo's {{…}} placeholders in place of values known only at run
// time), the launcher into rank pods, and both commands read them back
// with AddFlags and Decode. Every field is the flag's text.
type Args struct {
	// Gang runs the pod as one node of a distributed step (--gang; rank pods).
	Gang bool
	// Run is the run id (--run).
	Run string
	// WorkDir holds the inputs and outputs (--work).
	WorkDir string
	// OutputParams is where output parameters are written for Argo (--output-params).
	OutputParams string
	// Step is the step's wiring, Encode of a plan.Wiring (--step).
	Step string
	// Params and Upstream are NAME=VALUE: pipeline parameters (--param)
	// and upstream output parameters feeding inputs (--upstream), each
	// value in EncodeValue's encoding (see Value).
	Params, Upstream []string
	// Cache is the step cache's mode, a CacheMode (--cache; "" is off).
	Cache string
	// Iteration is a loop iteration's index, 0-based (--iteration).
	Iteration string
	// ArgoStatus, ArgoFailures and ArgoSteps give a finally step the run's
	// outcome (--argo-status, --argo-failures, --argo-steps; see RunFields).
	ArgoStatus, ArgoFailures, ArgoSteps string
	// ScheduledTime is the run's {{run.scheduledTime}}, RFC 3339
	// (--scheduled-time; a compiled step that reads it).
	ScheduledTime string
	// Image is the step's image, part of its fingerprint (--image; step pods).
	Image string
	// Component is Encode of the step's plan.Component (--component).
	Component string
	// Distributed is Encode of a plan.Launch (--distributed; launcher pods).
	Distributed string
	// CheckpointKeep and CheckpointEvery are how a rank pod keeps its
	// checkpoint directory, its step's distributed.checkpoint keep (a
	// number) and every (a duration) (--checkpoint-keep,
	// --checkpoint-every; rank pods, "" for the defaults).
	CheckpointKeep, CheckpointEvery string
	// ResumeFrom is the run whose last checkpoint of the step a distributed
	// step restores while its own run has none: a rerun's (--resume-from;
	// launcher and rank pods).
	ResumeFrom string
	// Argv, when set, replaces the component's command and args (after --).
	Argv []string
}

// CacheMode says what a step does with the step cache (--cache).
type CacheMode string

const (
	// CacheOn looks the step up and records it when it succeeds.
	CacheOn CacheMode = "on"
	// CacheRefresh runs the step and records it (pipectl run --no-cache).
	CacheRefresh CacheMode = "refresh"
	// CacheOff neither looks up nor records (cache: false); --cache's
	// default.
	CacheOff CacheMode = "off"
)

// ParseCacheMode reads a --cache value.
func ParseCacheMode(s string) (CacheMode, error) {
	switch m := CacheMode(s); m {
	case CacheOn, CacheRefresh, CacheOff:
		return m, nil
	}
	return "", fmt.Errorf("--cache %q: want on, refresh or off", s)
}

// StepCacheMode is the mode of a step: off when it says cache: false,
// refresh when the run reuses nothing, else on.
func StepCacheMode(cache, noCache bool) CacheMode {
	switch {
	case !cache:
		return CacheOff
	case noCache:
		return CacheRefresh
	}
	return CacheOn
}

// Command says which command's flags AddFlags declares.
type Command int

const (
	// Exec is `pipectl exec`: every flag but --distributed.
	Exec Command = iota
	// Launch is `pipectl launch`: every flag but --gang and --image.
	Launch
)

// Value is a NAME=VALUE flag value with value in the wire's encoding, so
// that Kubernetes expands no $(VAR) in it.
func Value(name, value string) string { return name + "=" + EncodeValue(value) }

// Values are the NAME=VALUE flag values of m, sorted by name (see Value).
func Values(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Value(k, m[k]))
	}
	return out
}

// AddFlags declares the flags of Args on fl for cmd (Argv comes after --
// and is the command's to take).
func (a *Args) AddFlags(fl *pflag.FlagSet, cmd Command) {
	if cmd == Exec {
		fl.BoolVar(&a.Gang, "gang", false, "run as one node of a distributed step (set by pipectl launch in rank pods; the rank env comes from the pod)")
	}
	fl.StringVar(&a.Run, "run", "", "the run id")
	fl.StringVar(&a.WorkDir, "work", "", "work directory for inputs and outputs (default: a temporary directory, removed after)")
	fl.StringVar(&a.OutputParams, "output-params", "", "write output parameters to DIR/<name>")
	fl.StringVar(&a.Step, "step", "", "the step's wiring: base64 JSON (from pipectl compile)")
	fl.StringArrayVarP(&a.Params, "param", "p", nil, "a pipeline parameter's value: NAME=VALUE (repeatable)")
	fl.StringArrayVar(&a.Upstream, "upstream", nil, "an upstream output parameter for an input: INPUT=VALUE (repeatable)")
	fl.StringVar(&a.Cache, "cache", string(CacheOff), "the step cache: on (reuse an earlier step's outputs when the fingerprint matches, record this one), refresh (run, record), off")
	fl.StringVar(&a.Iteration, "iteration", "", "the loop iteration to run, 0-based (a loop step): its outputs and cache entry are STEP[i]'s")
	fl.StringVar(&a.ArgoStatus, "argo-status", "", "a finally step's {{workflow.status}}")
	fl.StringVar(&a.ArgoFailures, "argo-failures", "", "a finally step's {{workflow.failures}}")
	fl.StringVar(&a.ArgoSteps, "argo-steps", "", "a finally step's base64 of the workflow's pipectl.dev/steps annotation")
	fl.StringVar(&a.ScheduledTime, "scheduled-time", "", "the run's {{run.scheduledTime}}: the time a schedule ran it for, RFC 3339")
	if cmd == Exec {
		fl.StringVar(&a.Image, "image", "", "the image the step runs in (part of its cache fingerprint)")
	}
	fl.StringVar(&a.Component, "component", "", "the component: base64 JSON (from pipectl compile)")
	if cmd == Launch {
		fl.StringVar(&a.Distributed, "distributed", "", "the launch spec: base64 JSON (from pipectl compile)")
	}
	if cmd == Exec {
		fl.StringVar(&a.CheckpointKeep, "checkpoint-keep", "", "with --gang: how many checkpoints of the step stay in the store (default 1)")
		fl.StringVar(&a.CheckpointEvery, "checkpoint-every", "", "with --gang: how often node 0 stores the checkpoint directory while its ranks run (default 1m)")
	}
	fl.StringVar(&a.ResumeFrom, "resume-from", "", "a distributed step: the run whose last checkpoint of the step is restored while this run has none (a rerun's)")
}

// Flags are the arguments of a container running `pipectl exec` or
// `pipectl launch` with a: the flags that are set, in a fixed order, then
// -- and Argv. Kubernetes expands $(VAR) in container arguments and reads
// $$ as $, so every $ is doubled (values in Value's encoding hold none).
func (a Args) Flags() []string {
	var out []string
	add := func(name, v string) {
		if v != "" {
			out = append(out, "--"+name+"="+dollars(v))
		}
	}
	if a.Gang {
		out = append(out, "--gang")
	}
	add("run", a.Run)
	add("work", a.WorkDir)
	add("output-params", a.OutputParams)
	add("step", a.Step)
	for _, p := range a.Params {
		add("param", p)
	}
	for _, u := range a.Upstream {
		add("upstream", u)
	}
	add("cache", a.Cache)
	add("iteration", a.Iteration)
	add("argo-status", a.ArgoStatus)
	add("argo-failures", a.ArgoFailures)
	add("argo-steps", a.ArgoSteps)
	add("scheduled-time", a.ScheduledTime)
	add("image", a.Image)
	add("component", a.Component)
	add("distributed", a.Distributed)
	add("checkpoint-keep", a.CheckpointKeep)
	add("checkpoint-every", a.CheckpointEvery)
	add("resume-from", a.ResumeFrom)
	if len(a.Argv) > 0 {
		out = append(out, "--")
		for _, arg := range a.Argv {
			out = append(out, dollars(arg))
		}
	}
	return out
}

func dollars(s string) string { return strings.ReplaceAll(s, "$", "$$") }
