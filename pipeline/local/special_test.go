package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// TestSpecialOutputs: a step whose output is a named pipe (or a directory
// holding one) fails with a message saying so; publishing never blocks.
func TestSpecialOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, outputs, script, want string
	}{
		{"file output is a FIFO", "{name: data, type: Dataset}", `mkfifo "$1"`, "is a named pipe (FIFO): only regular files and directories can be stored"},
		{"directory output holds a FIFO", "{name: data, type: Dataset}", `mkdir "$1" && echo x > "$1/a" && mkfifo "$1/p"`, "is a named pipe (FIFO): only regular files and directories can be stored"},
		{"output parameter is a FIFO", "{name: data, type: string}", `mkfifo "$1"`, "a named pipe (FIFO), not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.load(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: special}
steps:
  - name: make` + shComponent("make", "", tc.outputs, tc.script, "{{outputs.data.path}}"))
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			run, err := f.run(ctx, p, nil, nil)
			if ctx.Err() != nil {
				t.Fatal("the run blocked until its 60 s deadline")
			}
			if err == nil {
				t.Fatal("the run succeeded, want the step to fail")
			}
			st := run.Step("make")
			if st.Status != artifacts.StatusFailed || !strings.Contains(st.Message, tc.want) {
				t.Errorf("step make: %s %q, want Failed with a message containing %q", st.Status, st.Message, tc.want)
			}
		})
	}
}
