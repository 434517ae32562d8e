package argo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheFlags: every step pod and launcher pod gets --cache (on; off for
// a step with cache: false; refresh with Options.NoCache), step pods their
// image too; steps that differ only in cache do not share a template.
func TestCacheFlags(t *testing.T) {
	src, err := os.ReadFile("testdata/distributed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// report runs the echo component twice: once cached, once not.
	yaml := string(src) + `  - name: again
    component: components/echo.yaml
    inputs: {msg: "{{steps.train.outputs.loss}}"}
    cache: false
`
	file := filepath.Join(t.TempDir(), "p.yaml")
	comps, err := filepath.Abs("testdata/components")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(comps, filepath.Join(filepath.Dir(file), "components")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		noCache bool
		want    map[string][]string
	}{
		{"cache", false, map[string][]string{
			"prep": {"--cache=on", "--image=example/split:1"}, "train": {"--cache=on"},
			"report": {"--cache=on", "--image=example/echo:1"}, "again": {"--cache=off", "--image=example/echo:1"},
		}},
		{"no-cache", true, map[string][]string{
			"prep": {"--cache=refresh", "--image=example/split:1"}, "train": {"--cache=refresh"},
			"report": {"--cache=refresh", "--image=example/echo:1"}, "again": {"--cache=off", "--image=example/echo:1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.NoCache = tc.noCache
			wf, _ := compileFile(t, file, opts)
			lint(t, wf)
			templates := map[string][]string{}
			for _, tmpl := range wf.Spec.Templates {
				if tmpl.Container != nil {
					templates[tmpl.Name] = tmpl.Container.Args
				}
			}
			got := map[string][]string{}
			for _, task := range wf.Spec.Templates[0].DAG.Tasks {
				for _, a := range templates[task.Template] {
					if strings.HasPrefix(a, "--cache=") || strings.HasPrefix(a, "--image=") {
						got[task.Name] = append(got[task.Name], a)
					}
				}
				slices.Sort(got[task.Name])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cache flags by task (-want +got):\n%s", diff)
			}
		})
	}
}
