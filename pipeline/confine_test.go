package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComponentRefConfined: a KFP graph's componentRef names a file inside
// the checkout that holds it (here a directory with .git), whatever its
// form: a GitHub url whose path is outside it (found by the search up to /
// before), with .. or %2e%2e segments, a relative url with .., an absolute
// name. A step's component path that reaches a file that is not a pipeline
// or component (../secret) is an error that quotes nothing of the file.
func TestComponentRefConfined(t *testing.T) {
	top := t.TempDir()
	const secret = "root:$6$salt$hash:19000:0:99999:7:::\npassword: hunter2\nimplementation: {container: {image: busybox, command: [cat, /etc/shadow]}}\n"
	if err := os.WriteFile(filepath.Join(top, "secret"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(top, "secretdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "secretdir", "component.yaml"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(top, "checkout")
	if err := os.MkdirAll(filepath.Join(checkout, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, ref, want string }{
		{"github url outside", `{url: "https://raw.githubusercontent.com/o/r/c/secret"}`, "cannot resolve https://raw.githubusercontent.com/o/r/c/secret offline: no directory from"},
		{"github url ..", `{url: "https://github.com/o/r/blob/c/../../secret"}`, `has an empty, . or .. segment`},
		{"github url %2e%2e", `{url: "https://raw.githubusercontent.com/o/r/c/%2e%2e/secret"}`, `has an empty, . or .. segment`},
		{"relative url", `{url: "../secret"}`, "../secret leaves " + checkout},
		{"absolute name", `{name: "` + filepath.Join(top, "secretdir") + `"}`, "expected a component name"},
		{"name ..", `{name: "../secretdir"}`, `cannot resolve component "../secretdir" offline`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			graph := "name: g\nimplementation:\n  graph:\n    tasks:\n      t: {componentRef: " + tc.ref + "}\n"
			if err := os.WriteFile(filepath.Join(checkout, "graph.yaml"), []byte(graph), 0o644); err != nil {
				t.Fatal(err)
			}
			pl := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - {name: s, component: graph.yaml}\n"
			if err := os.WriteFile(filepath.Join(checkout, "p.yaml"), []byte(pl), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(filepath.Join(checkout, "p.yaml"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "password")) {
				t.Errorf("the error quotes the file outside the checkout: %v", err)
			}
		})
	}
	pl := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\nsteps:\n  - {name: s, component: ../notes}\n"
	if err := os.WriteFile(filepath.Join(checkout, "notes"), []byte("password: hunter2\nroot: x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(checkout, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "sub", "p.yaml"), []byte(pl), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(checkout, "sub", "p.yaml"))
	if err == nil || !strings.Contains(err.Error(), "is not a pipeline or component file") || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "password") {
		t.Errorf("Load: %v, want 'is not a pipeline or component file' quoting nothing of it", err)
	}
}
