package local

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestValuesReachArgvAsWritten runs a probe that writes its argv to an
// artifact: every value (params from -p and defaults, component defaults,
// step literals, an upstream output parameter) arrives byte for byte as
// written, and a when compares True with true as the same bool.
func TestValuesReachArgvAsWritten(t *testing.T) {
	f := newFixture(t)
	p := f.load(header + `params:
  cfg: {type: json, default: {"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}}
  cfgText: {type: json, default: '{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}'}
  cfgFlag: {type: json}
  lr: {type: float, default: 1.0}
  flag: {type: bool, default: 'True'}
  big: {type: int, default: 12345678901234567890}
steps:
  - name: up
` + shComponent("up", "", "{name: loss, type: float}", `printf '1.50\n' > "$1"`, "{{outputs.loss.path}}") + `
  - name: probe
` + shComponent("probe",
		`{name: cfg, type: json}, {name: cfgText, type: json}, {name: cfgFlag, type: json}, {name: lr, type: float},
        {name: flag, type: bool}, {name: big, type: int}, {name: loss, type: float}, {name: lit, type: float},
        {name: litJSON, type: json}, {name: litBool, type: bool}, {name: def, type: json, default: {b: 2.0, a: [yes, ~]}},
        {name: defFloat, type: float, default: 2.50}`,
		"{name: argv, type: Artifact}", `out=$1; shift; printf '%s\000' "$@" > "$out"`,
		"{{outputs.argv.path}}", "{{inputs.cfg}}", "{{inputs.cfgText}}", "{{inputs.cfgFlag}}", "{{inputs.lr}}", "{{inputs.flag}}",
		"{{inputs.big}}", "{{inputs.loss}}", "{{inputs.lit}}", "{{inputs.litJSON}}", "{{inputs.litBool}}", "{{inputs.def}}", "{{inputs.defFloat}}") + `
    inputs:
      cfg: "{{params.cfg}}"
      cfgText: "{{params.cfgText}}"
      cfgFlag: "{{params.cfgFlag}}"
      lr: "{{params.lr}}"
      flag: "{{params.flag}}"
      big: "{{params.big}}"
      loss: "{{steps.up.outputs.loss}}"
      lit: 1.0
      litJSON: {z: 1.0, y: 12345678901234567890}
      litBool: TRUE
    when: "{{params.flag}} == true"
`)
	run, err := f.run(context.Background(), p, map[string]string{"cfgFlag": `{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
	}
	if got := stepStatus(run); got["probe"] != record.StatusSucceeded {
		t.Fatalf("probe did not run: %v\n%s", got, f.status)
	}
	ctx := context.Background()
	out, err := recordstore.Resolve(ctx, f.store, run.ID+"/probe/argv")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := artifacts.Copy(ctx, f.store, out.Key, &buf, out.Meta.SHA256); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"replicas":2,"x":1.0,"big":12345678901234567890,"a":[3,1]}`,
		`{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`,
		`{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`,
		"1.0",
		"True",
		"12345678901234567890",
		"1.50",
		"1.0",
		`{"z":1.0,"y":12345678901234567890}`,
		"TRUE",
		`{"b":2.0,"a":["yes",null]}`,
		"2.50",
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\x00"), "\x00")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	for _, o := range run.Step("up").Outputs {
		if o.Name == "loss" && (o.Value == nil || *o.Value != "1.50") {
			t.Errorf("run record keeps loss as %v, want 1.50 as written", o.Value)
		}
	}
}
