package argo

import (
	"strings"
	"testing"
)

// TestResumeFrom: a rerun's workflow (Options.ResumeFrom) gives the
// launcher of each distributed step --resume-from, which it passes to the
// rank pods; step pods, which keep no checkpoint, do not get it.
func TestResumeFrom(t *testing.T) {
	opts := testOptions()
	opts.ResumeFrom = "attrition-x7"
	wf, _ := compileFile(t, "../../examples/attrition/pipeline.yaml", opts)
	lint(t, wf)
	launchers := 0
	for _, tmpl := range wf.Spec.Templates {
		c := tmpl.Container
		if c == nil {
			continue
		}
		args := strings.Join(c.Args, " ")
		launcher := strings.Contains(args, "--distributed=")
		if launcher {
			launchers++
		}
		if got := strings.Contains(args, "--resume-from=attrition-x7"); got != launcher {
			t.Errorf("template %s (launcher %t): --resume-from given %t: %s", tmpl.Name, launcher, got, args)
		}
	}
	if launchers != 1 {
		t.Errorf("%d launcher templates, want train's", launchers)
	}
	wf, _ = compileFile(t, "../../examples/attrition/pipeline.yaml", testOptions())
	for _, tmpl := range wf.Spec.Templates {
		if c := tmpl.Container; c != nil && strings.Contains(strings.Join(c.Args, " "), "--resume-from") {
			t.Errorf("a run that is not a rerun resumes: template %s", tmpl.Name)
		}
	}
}
