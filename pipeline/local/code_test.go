package local

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An edit to any file in a component's folder, even one its command does
// not name, re-runs exactly the steps that use that component, with the
// new file; a local store and work folder inside the folder do not count.
func TestCodeEditRerunsItsSteps(t *testing.T) {
	f := newFixture(t)
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(f.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"a", "b"} {
		write(c+"/component.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: `+c+`}
command: [sh, run.sh]
`)
		write(c+"/run.sh", `. ./lib/settings.sh; echo "`+c+` says $WORD"`+"\n")
		write(c+"/lib/settings.sh", "WORD=one\n")
	}
	p := f.load(header + `steps:
  - {name: a, component: a/component.yaml}
  - {name: b, component: b/component.yaml}
`)
	codes := map[string]string{}
	run := func() (cached map[string]bool) {
		t.Helper()
		rec, err := f.run(context.Background(), p, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		cached = map[string]bool{}
		for _, s := range rec.Steps {
			cached[s.Name] = s.Cached
			codes[s.Name] = s.Code
		}
		return cached
	}
	run()
	first := maps.Clone(codes)
	if !strings.HasPrefix(first["a"], "sha256:") || first["a"] == first["b"] {
		t.Fatalf("the run record's code digests: %v, want one per folder", first)
	}
	if c := run(); !c["a"] || !c["b"] {
		t.Fatalf("a second run reused %v, want both steps", c)
	}
	write("b/lib/settings.sh", "WORD=two\n")
	if c := run(); !c["a"] || c["b"] {
		t.Fatalf("after an edit in b's folder the run reused %v, want a only", c)
	}
	if codes["a"] != first["a"] || codes["b"] == first["b"] {
		t.Errorf("code digests %v after b's edit, were %v: want b's only changed", codes, first)
	}
	if !strings.Contains(f.logs.String(), "b says two") {
		t.Fatalf("b did not run the edited file: %q", f.logs.String())
	}
	// A file the runner cannot ship fails the run before any step, naming it.
	if err := os.Symlink("/etc/hostname", filepath.Join(f.dir, "a", "host")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(context.Background(), p, nil, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(f.dir, "a", "host")) {
		t.Fatalf("a link out of a's folder: %v", err)
	}
}
