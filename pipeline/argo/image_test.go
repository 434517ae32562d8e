package argo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestStepImage: a step's image: replaces its component's, also when the
// component leaves it empty (as KFP catalogue components do for their users
// to fill in); with neither, compile says where to set one.
func TestStepImage(t *testing.T) {
	const pipe = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: img}
steps:
  - name: a
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: "%s", command: [echo, hi]}
%s`
	for _, tc := range []struct {
		name, component, step, want, wantErr string
	}{
		{"component's", "base:1", "", "base:1", ""},
		{"step's replaces it", "base:1", "    image: mine:2\n", "mine:2", ""},
		{"component leaves it empty", "", "    image: mine:2\n", "mine:2", ""},
		{"neither", "", "", "", "component c has no image: set image: in its spec, or in the step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pipeline.yaml")
			if err := os.WriteFile(file, []byte(strings.Replace(strings.Replace(pipe, "%s", tc.component, 1), "%s", tc.step, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := pipeline.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			wf, err := Compile(p, testOptions())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Compile: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lint(t, wf)
			var images []string
			for _, tmpl := range wf.Spec.Templates {
				if tmpl.Container != nil {
					images = append(images, tmpl.Container.Image)
				}
			}
			if len(images) != 1 || images[0] != tc.want {
				t.Errorf("step containers' images %v, want [%s]", images, tc.want)
			}
		})
	}
}

// TestPinnedImages: with Options.Images, every image the workflow names —
// the step containers, exec's --image (the fingerprint), the init
// containers, the launcher pods and the ranks' images in the launch plan —
// is the pinned reference; Images lists what to pin.
func TestPinnedImages(t *testing.T) {
	const example = "../../examples/attrition/pipeline.yaml"
	p, err := pipeline.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	if got, want := Images(p, opts), []string{"pipectl-example-attrition:0.1", "pipectl:test"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Images = %q, want %q", got, want)
	}
	const (
		pinnedPipectl = "reg.test/pipectl@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		pinnedExample = "reg.test/example@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	)
	opts.Images = map[string]string{"pipectl:test": pinnedPipectl, "pipectl-example-attrition:0.1": pinnedExample}
	wf, b := compileFile(t, example, opts)
	lint(t, wf)
	if strings.Contains(string(b), "pipectl:test") || strings.Contains(string(b), "attrition:0.1") {
		t.Errorf("the workflow still names a tag:\n%s", b)
	}
	var steps, launchers int
	for _, tmpl := range wf.Spec.Templates {
		c := tmpl.Container
		if c == nil {
			continue
		}
		args := strings.Join(c.Args, " ")
		switch c.Command[len(c.Command)-1] {
		case "exec":
			steps++
			if c.Image != pinnedExample || tmpl.InitContainers[0].Image != pinnedPipectl || !strings.Contains(args, "--image="+pinnedExample) {
				t.Errorf("step %s: image %s, init %s, args %s", tmpl.Name, c.Image, tmpl.InitContainers[0].Image, args)
			}
		case "launch":
			launchers++
			if c.Image != pinnedPipectl {
				t.Errorf("launcher %s: image %s", tmpl.Name, c.Image)
			}
			l := decodeLaunch(t, c.Args)
			if l.Image != pinnedExample || l.PipectlImage != pinnedPipectl {
				t.Errorf("launch plan: image %s, pipectl image %s", l.Image, l.PipectlImage)
			}
		}
	}
	if steps != 2 || launchers != 1 {
		t.Errorf("%d step and %d launcher templates, want 2 and 1", steps, launchers)
	}
	// Launch (launch --dry-run) pins as Compile does.
	sp, err := plan.Build(p, "train")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Launch(sp, opts)
	if err != nil || l.Image != pinnedExample || l.PipectlImage != pinnedPipectl || sp.Image != "pipectl-example-attrition:0.1" {
		t.Errorf("Launch: %+v, %v (the step's own plan: %s)", l, err, sp.Image)
	}
}

func decodeLaunch(t *testing.T, args []string) *plan.Launch {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--distributed="); ok {
			l, err := plan.DecodeLaunch(v)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	t.Fatalf("no --distributed in %q", args)
	return nil
}
