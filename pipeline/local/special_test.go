package local

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/record"
)

// TestSpecialOutputs: a step whose output is a named pipe (or a directory
// holding one) fails with a message saying so; publishing never blocks.
// The program exited 0: the record keeps its exit code, and the summary
// says it exited 0 and which output could not be stored (not "exit code 1").
func TestSpecialOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, outputs, script, want string
		what                        string // the summary's start of the failure
	}{
		{"file output is a FIFO", "{name: data, type: Dataset}", `mkfifo "$1"`, "is a named pipe (FIFO): only regular files and directories can be stored", `publish output "data": `},
		{"directory output holds a FIFO", "{name: data, type: Dataset}", `mkdir "$1" && echo x > "$1/a" && mkfifo "$1/p"`, "is a named pipe (FIFO): only regular files and directories can be stored", `publish output "data": `},
		{"output parameter is a FIFO", "{name: data, type: string}", `mkfifo "$1"`, "a named pipe (FIFO), not a regular file", `output "data": `},
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
			var rerr *RunError
			if !errors.As(err, &rerr) {
				t.Fatalf("run error %v, want a RunError", err)
			}
			st := run.Step("make")
			if st.Status != record.StatusFailed || !strings.Contains(st.Message, tc.want) {
				t.Errorf("step make: %s %q, want Failed with a message containing %q", st.Status, st.Message, tc.want)
			}
			if st.ExitCode == nil || *st.ExitCode != 0 {
				t.Errorf("step make: exit code %s, want the program's, 0", fmtCode(st.ExitCode))
			}
			if want := "make         Failed: program exited 0; " + tc.what; !strings.Contains(rerr.Summary, want) || strings.Contains(rerr.Summary, "exit code") {
				t.Errorf("summary, want %q and no exit code:\n%s", want, rerr.Summary)
			}
		})
	}
}

func fmtCode(c *int) string {
	if c == nil {
		return "none"
	}
	return strconv.Itoa(*c)
}
