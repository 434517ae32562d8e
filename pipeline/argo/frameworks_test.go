package argo

import (
	"encoding/base64"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// TestCompileFrameworks: xgboost, mpi and jax steps compile (their
// framework travels in the launch spec).
func TestCompileFrameworks(t *testing.T) {
	p, err := pipeline.Load("../../examples/frameworks/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
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
	for _, f := range []string{"xgboost", "mpi", "jax"} {
		if !strings.Contains(all, `"framework":"`+f+`"`) {
			t.Errorf("no launch spec with framework %s:\n%s", f, all)
		}
	}
}
