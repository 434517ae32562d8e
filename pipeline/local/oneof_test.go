package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
)

// TestRunOneOf: a step given a nested pipeline's oneOf output gets the
// output of the candidate that ran (the others skipped by their when),
// waits for all of them, and is skipped when none ran.
func TestRunOneOf(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	branches := header + `params:
  side: {type: string}
steps:
  - name: a
    when: "{{params.side}} == a"
` + shComponent("a", "", "{name: v, type: string}", `printf 'from a' > "$1"`, "{{outputs.v.path}}") + `
  - name: b
    when: "{{params.side}} == b"
` + shComponent("b", "", "{name: v, type: string}", `printf 'from b' > "$1"`, "{{outputs.v.path}}") + `
outputs:
  v: {oneOf: ["{{steps.a.outputs.v}}", "{{steps.b.outputs.v}}"]}
`
	if err := os.WriteFile(filepath.Join(f.dir, "branches.yaml"), []byte(branches), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.load(header + `params:
  side: {type: string}
steps:
  - name: pick
    component: branches.yaml
    inputs: {side: "{{params.side}}"}
  - name: use
    inputs: {v: "{{steps.pick.outputs.v}}"}
` + shComponent("use", "{name: v, type: string}", "{name: got, type: string}", `printf 'got %s' "$1" > "$2"`, "{{inputs.v}}", "{{outputs.got.path}}") + `
`)
	if deps := p.Deps("use"); strings.Join(deps, ",") != "pick.a,pick.b" {
		t.Errorf("use depends on %v, want pick.a and pick.b", deps)
	}
	for _, tc := range []struct{ side, status, got string }{
		{"a", record.StatusSucceeded, "got from a"},
		{"b", record.StatusSucceeded, "got from b"},
		{"c", record.StatusSkipped, ""},
	} {
		run, err := f.run(ctx, p, map[string]string{"side": tc.side}, nil)
		if err != nil {
			t.Fatalf("side %s: Run: %v\n%s", tc.side, err, f.status)
		}
		s := run.Step("use")
		got := ""
		if len(s.Outputs) == 1 && s.Outputs[0].Value != nil {
			got = *s.Outputs[0].Value
		}
		if s.Status != tc.status || got != tc.got {
			t.Errorf("side %s: use %s %q (%s), want %s %q", tc.side, s.Status, got, s.Message, tc.status, tc.got)
		}
		if tc.status == record.StatusSkipped && !strings.Contains(s.Message, "none of upstream steps pick.a, pick.b ran") {
			t.Errorf("side %s: use skipped with %q", tc.side, s.Message)
		}
	}
}

// TestOneOfRefused: a oneOf output is given whole to an input; in a
// condition, inside a longer text or as a Secret's name it is refused at
// its step.
func TestOneOfRefused(t *testing.T) {
	f := newFixture(t)
	branches := header + `steps:
  - name: a
` + shComponent("a", "", "{name: v, type: string}", `printf a > "$1"`, "{{outputs.v.path}}") + `
  - name: b
` + shComponent("b", "", "{name: v, type: string}", `printf b > "$1"`, "{{outputs.v.path}}") + `
outputs:
  v: {oneOf: ["{{steps.a.outputs.v}}", "{{steps.b.outputs.v}}"]}
`
	if err := os.WriteFile(filepath.Join(f.dir, "branches.yaml"), []byte(branches), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ step, want string }{
		{`    when: "{{steps.pick.outputs.v}} == a"
    inputs: {v: x}`, `{{steps.pick.outputs.v}} is the output of the first of several steps that ran (oneOf): a condition cannot use it`},
		{`    inputs: {v: "got {{steps.pick.outputs.v}}"}`, `{{steps.pick.outputs.v}} is the output of the first of several steps that ran (oneOf): it can only be given whole`},
		{`    secrets: [{env: T, secret: "{{steps.pick.outputs.v}}", key: k}]
    inputs: {v: x}`, `{{steps.pick.outputs.v}} is the output of the first of several steps that ran (oneOf): a Secret's name cannot use it`},
	} {
		path := filepath.Join(f.dir, "pipeline.yaml")
		src := header + `steps:
  - name: pick
    component: branches.yaml
  - name: use
` + tc.step + shComponent("use", "{name: v, type: string}", "", `true`, "{{inputs.v}}") + `
`
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := pipeline.Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load of\n%s\n= %v, want %q", src, err, tc.want)
		}
	}
}
