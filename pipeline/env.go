package pipeline

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// env checks steps[i].env: valid names, none of the rank environment on a
// distributed step (Trainer refuses them too), values that reference params
// only (items: its loop's items, when the file gives them).
func (v *validator) env(i int, index map[string]int, items []string) {
	for j, e := range v.p.Steps[i].Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "= ") {
			v.atValue(v.sp(i, "env", j, "name"), "invalid environment variable name %q", e.Name)
		}
		if v.p.Steps[i].Distributed != nil && rankenv.Reserved(e.Name) {
			v.atValue(v.sp(i, "env", j, "name"), "variable %s is pipectl's own: the rank environment of a distributed step (of its framework: torch, jax, xgboost or mpi) is set by pipectl", e.Name)
		}
		v.envValue(v.sp(i, "env", j, "value"), e.Value, index, i, items)
	}
}

// envValue checks the references of a step env value: parameters only.
func (v *validator) envValue(path []any, val string, index map[string]int, self int, items []string) {
	_, refs, err := parseRefs(val)
	if err != nil {
		v.atValue(path, "%v", err)
		return
	}
	var params []ref
	for _, r := range refs {
		if r.step != "" {
			v.atValue(path, "an env value cannot use {{steps.%s.outputs.%s}} (give the output to a component input instead)", r.step, r.output)
			continue
		}
		params = append(params, r)
	}
	v.checkRefs(path, params, index, self)
	v.artifactParams(path, params)
	v.checkItems(path, params, items)
}

// secretKeyRE is what a Kubernetes Secret's key may be.
var secretKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-._a-zA-Z0-9]+$`) })

// secrets checks steps[i].secrets: each a valid variable name, given once
// and not also by env, that pipectl does not set itself, from a Secret
// named as Kubernetes names Secrets, by a valid key.
func (v *validator) secrets(i int, index map[string]int) {
	s := &v.p.Steps[i]
	seen := map[string]bool{}
	for _, e := range s.Env {
		seen[e.Name] = true
	}
	if s.Resolved != nil {
		for _, e := range s.Resolved.Env {
			seen[e.Name] = true
		}
	}
	for j, sec := range s.Secrets {
		switch {
		case !components.ValidEnvName(sec.Env):
			v.atValue(v.sp(i, "secrets", j, "env"), "invalid environment variable name %q", sec.Env)
		case seen[sec.Env]:
			v.atValue(v.sp(i, "secrets", j, "env"), "variable %s is given twice (by the step's or the component's env, or another secret)", sec.Env)
		case reservedEnv(sec.Env):
			v.atValue(v.sp(i, "secrets", j, "env"), "variable %s is pipectl's own (PIPECTL_*, the store's AWS_* settings and the rank environment are set by pipectl)", sec.Env)
		}
		seen[sec.Env] = true
		if b, refs, err := parseBinding(sec.Secret); err != nil || len(refs) > 0 {
			switch prm, ok := v.p.Params[b.Param]; {
			case err == nil && b.Step != "":
				v.secretFromStep(i, j, b, refs, index)
			case err != nil || b.Param == "":
				v.atValue(v.sp(i, "secrets", j, "secret"), "expected a Secret's name, a whole {{params.NAME}} or {{steps.STEP.outputs.NAME}}, got %q", sec.Secret)
			case !ok:
				v.atValue(v.sp(i, "secrets", j, "secret"), "unknown parameter %q (params: %s)", b.Param, v.paramNames())
			case prm.Type != components.TypeString:
				v.atValue(v.sp(i, "secrets", j, "secret"), "parameter %q is %s: a Secret's name is a string", b.Param, prm.Type)
			}
		} else if msgs := validation.IsDNS1123Subdomain(sec.Secret); len(msgs) > 0 {
			v.atValue(v.sp(i, "secrets", j, "secret"), "invalid Secret name %q: %s", sec.Secret, strings.Join(msgs, "; "))
		}
		if len(sec.Key) > 253 || !secretKeyRE().MatchString(sec.Key) {
			v.atValue(v.sp(i, "secrets", j, "key"), "invalid Secret key %q: expected letters, digits, '-', '_' and '.' (at most 253)", sec.Key)
		}
	}
}

// reservedEnv reports whether pipectl sets the variable name itself in a
// step's program: PIPECTL_*, the store's AWS_* settings, the pod's own
// variables and the rank environment (PET_* too).
func reservedEnv(name string) bool {
	return strings.HasPrefix(name, wire.EnvPrefix) || strings.HasPrefix(name, wire.AWSPrefix) ||
		slices.Contains([]string{wire.EnvPodName, wire.EnvPodUID, wire.EnvPodNS}, name) || rankenv.Reserved(name)
}

// secretFromStep checks steps[i].secrets[j], whose Secret is named by step
// output b (refs its reference): a string output parameter of a step that
// does not loop, on a step that is not distributed (its launcher names its
// rank pods' Secrets when it starts, from the file or a param).
func (v *validator) secretFromStep(i, j int, b Binding, refs []ref, index map[string]int) {
	path := v.sp(i, "secrets", j, "secret")
	before := len(v.errs)
	v.checkRefs(path, refs, index, i)
	if len(v.errs) > before {
		return
	}
	switch out, ok := v.output(b.Step, b.Output); {
	case v.p.Steps[i].Distributed != nil:
		v.atValue(path, "a distributed step's Secret is named in the file or by a param, not by a step's output")
	case !ok:
	case v.loops(b.Step):
		v.atValue(path, "output %q of loop step %q is collected into a JSON list: a Secret's name is one value", b.Output, b.Step)
	case out.Type != components.TypeString:
		v.atValue(path, "output %q of step %q is %s: a Secret's name is a string", b.Output, b.Step, out.Type)
	}
}
