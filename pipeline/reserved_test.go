package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReservedStepNames: a step whose outputs would land on the run's own
// objects in the store (its journal, its record) is refused where it is
// named, so that no output ever overwrites or hides them.
func TestReservedStepNames(t *testing.T) {
	const echo = `component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [echo]}`
	for _, tc := range []struct {
		name, pipe, sub, want string
	}{
		{"journal", "steps:\n  - name: journal\n    " + echo + "\n", "", `pipeline.yaml:6:11: steps[0].name: step name "journal" is reserved`},
		{"run.json", "steps:\n  - name: run\n    component: sub.pipeline.yaml\n", "steps:\n  - name: json\n    " + echo + "\n",
			"sub.pipeline.yaml would be named run.json, the key of the run record in the store (rename step run or json)"},
		{"journal in a nested pipeline", "steps:\n  - name: outer\n    component: sub.pipeline.yaml\n", "steps:\n  - name: journal\n    " + echo + "\n", `sub.pipeline.yaml:5:11: steps[0].name: step name "journal" is reserved`},
		{"run in a nested pipeline", "steps:\n  - name: outer\n    component: sub.pipeline.yaml\n", "steps:\n  - name: run\n    " + echo + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			head := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p}\n"
			os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(head+"params: {}\n"+tc.pipe), 0o644)
			if tc.sub != "" {
				os.WriteFile(filepath.Join(dir, "sub.pipeline.yaml"), []byte(strings.Replace(head, "{name: p}", "{name: sub}", 1)+tc.sub), 0o644)
			}
			_, err := Load(filepath.Join(dir, "pipeline.yaml"))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}
