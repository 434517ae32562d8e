package argo

import (
	"encoding/base64"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// TestCompileFrameworks: xgboost and jax steps compile (their framework
// travels in the launch spec); an mpi step is refused, saying why.
func TestCompileFrameworks(t *testing.T) {
	p, err := pipeline.Load("../../examples/frameworks/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(p, testOptions()); err == nil || !strings.Contains(err.Error(), "step mpi: framework mpi runs on this machine only") {
		t.Errorf("Compile with an mpi step: %v", err)
	}
	p.Steps = p.Steps[:1]
	p.Steps = append(p.Steps, mustStep(t, "../../examples/frameworks/pipeline.yaml", "jax"))
	wf, err := Compile(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	lint(t, wf)
	var specs []string
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.Container == nil {
			continue
		}
		for _, arg := range append(tmpl.Container.Command, tmpl.Container.Args...) {
			if spec, ok := strings.CutPrefix(arg, "--distributed="); ok {
				b, err := base64.StdEncoding.DecodeString(spec)
				if err != nil {
					t.Fatalf("--distributed %q: %v", spec, err)
				}
				specs = append(specs, string(b))
			}
		}
	}
	all := strings.Join(specs, "\n")
	for _, f := range []string{"xgboost", "jax"} {
		if !strings.Contains(all, `"framework":"`+f+`"`) {
			t.Errorf("no launch spec with framework %s:\n%s", f, all)
		}
	}
}

func mustStep(t *testing.T, file, name string) pipeline.Step {
	t.Helper()
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s in %s", name, file)
	return pipeline.Step{}
}
