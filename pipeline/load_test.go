package pipeline

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
)

func TestLoadValid(t *testing.T) {
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff([]string{"epochs", "tag", "flag"}, p.ParamOrder); diff != "" {
		t.Errorf("ParamOrder (-want +got):\n%s", diff)
	}
	var names []string
	for _, s := range p.Steps {
		names = append(names, s.Name+"="+s.Resolved.Metadata.Name)
	}
	if diff := cmp.Diff([]string{"data=make-data", "fit=fit", "kfp=train-model", "inline=echo"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	wantDeps := map[string][]string{"data": {}, "fit": {"data"}, "kfp": {"data"}, "inline": {"fit"}}
	for step, want := range wantDeps {
		if diff := cmp.Diff(want, p.Deps(step)); diff != "" {
			t.Errorf("Deps(%s) (-want +got):\n%s", step, diff)
		}
	}
	fit := p.Step("fit").Bindings()
	want := map[string]Binding{
		"data":   {Step: "data", Output: "data"},
		"epochs": {Param: "epochs"},
		"note":   {Literal: "run-{{params.tag}}"},
	}
	if diff := cmp.Diff(want, fit); diff != "" {
		t.Errorf("fit bindings (-want +got):\n%s", diff)
	}
	if got := p.Step("kfp").Timeout.Duration.String(); got != "1m30s" {
		t.Errorf("kfp timeout = %s, want 1m30s", got)
	}
	if d := p.Step("inline").Distributed; d == nil || d.Nodes != 2 || d.Procs() != 2 || d.MaxRestarts != 1 {
		t.Errorf("inline distributed = %+v", d)
	}
}

func TestLoadKFPComponent(t *testing.T) {
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := p.Step("kfp").Resolved
	var ios []string
	for _, in := range c.Inputs {
		ios = append(ios, "in:"+in.Name+":"+in.Type)
	}
	for _, out := range c.Outputs {
		ios = append(ios, "out:"+out.Name+":"+out.Type)
	}
	wantIO := []string{"in:training_data:Dataset", "in:epochs:int", "in:learning_rate:float", "out:model:Model", "out:final_loss:float"}
	if diff := cmp.Diff(wantIO, ios); diff != "" {
		t.Errorf("KFP inputs/outputs (-want +got):\n%s", diff)
	}
	wantArgs := []string{"--data", "{{inputs.training_data.path}}", "--epochs={{inputs.epochs}}", "--lr", "{{inputs.learning_rate}}", "--model", "{{outputs.model.path}}", "--loss", "{{outputs.final_loss.path}}"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("KFP args (-want +got):\n%s", diff)
	}
	if c.Image != "example/train:1" || c.Dir != filepath.Join("testdata", "components") {
		t.Errorf("image %q dir %q", c.Image, c.Dir)
	}
}

// TestLoadAliasedComponent: a step's component may be a YAML alias of
// another step's inline component (component: *say).
func TestLoadAliasedComponent(t *testing.T) {
	p, err := Load("testdata/alias.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Step("a").Resolved, p.Step("b").Resolved
	if a == nil || b == nil || b.Metadata.Name != "say" || !slices.Equal(a.Command, b.Command) {
		t.Errorf("step b's component %+v, want step a's %+v", b, a)
	}
}

// TestLoadInvalid checks one file per kind of problem: the message and the
// position of each error.
func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		file string
		// want lists "line:col field: message fragment" for each error, in order.
		want []string
	}{
		{"unknown-field", []string{`8:5 steps[0].retires: unknown field "retires": did you mean "retries"? (expected one of: after, cache, component,`}},
		{"unknown-step", []string{`9:13 steps[0].inputs.data: unknown step "nope" (steps: fit)`}},
		{"unknown-output", []string{`11:13 steps[1].inputs.data: step "data" (component make-data) has no output "dataset" (outputs: data, count)`}},
		{"unknown-param", []string{`11:13 steps[0].inputs.rows: unknown parameter "rowz" (params: epochs)`}},
		{"cycle", []string{`6:5 steps[0]: dependency cycle: a → c → b → a`}},
		{"type-mismatch", []string{`12:15 steps[1].inputs.epochs: type mismatch: output "data" of step "data" is Dataset, input "epochs" expects int`}},
		{"missing-input", []string{`8:5 steps[1]: step "fit" does not give component fit its required input "epochs" (int)`}},
		{"duplicate-step", []string{`8:11 steps[1].name: duplicate step name "data" (also steps[0])`}},
		{"bad-name", []string{`6:11 steps[0].name: invalid step name "Make_Data": expected a DNS-1123 label`}},
		{"bad-yaml", []string{`5:4 invalid YAML: did not find expected '-' indicator (line 5 is indented by 3 spaces, unlike any line above it (0, 2, 4 spaces)`}},
		{"bad-literal", []string{`9:13 steps[0].inputs.rows: input "rows": expected a whole number (int), got "ten"`}},
		{"bad-default", []string{`6:30 params.rows.default: invalid default: expected a whole number (int), got "many"`}},
		{"missing-component", []string{`7:16 steps[0].component: cannot read component file`}},
		{"bad-placeholder", []string{`13:23 steps[0].component.command[1]: {{inputs.mesage}} names no input (inputs: msg)`}},
		{"bad-shm-size", []string{`8:38 steps[0].distributed.shmSize: expected a size such as 8Gi or 512Mi, got "lots"`}},
		{"bad-framework", []string{
			`8:40 steps[0].distributed.framework: unknown framework "pytorch": expected one of torch, jax, xgboost, mpi`,
			`11:43 steps[1].distributed.procsPerNode: framework jax runs one process per node (it drives every device of its node): expected 1, got 4`,
			`16:16 steps[2].env[0].name: variable DMLC_TASK_ID is pipectl's own`,
			`17:16 steps[2].env[1].name: variable JAX_PROCESS_ID is pipectl's own`,
			`18:16 steps[2].env[2].name: variable OMPI_MCA_orte_default_hostfile is pipectl's own`,
			`22:7 steps[3].component.command: torchrun --bogus: not an option pipectl's local torchrun knows`,
			`27:7 steps[4].component.command: torchrun --nnodes 3: the step has 2 nodes`,
		}},
		{"bad-resources", []string{
			`6:22 steps[0].resources.cpu: expected a quantity such as 500m, 2 or 4Gi, got "two"`,
			`6:35 steps[0].resources.memory: expected a quantity such as 500m, 2 or 4Gi, got "1Gx"`,
			`15:40 steps[1].distributed.resources.gpuResource: expected a resource name such as nvidia.com/gpu, got "bad name!"`,
			`15:79 steps[1].distributed.resources.extra.example.com/fpga: expected a quantity such as 500m, 2 or 4Gi, got "lots"`,
			`22:38 steps[2].tolerations[0].operator: expected Equal or Exists, got "Maybe"`,
			`22:83 steps[2].tolerations[1].effect: expected NoSchedule, PreferNoSchedule or NoExecute, got "Never"`,
		}},
		{"artifact-default", []string{
			`6:34 params.data.default: invalid default of artifact parameter "data" (Dataset): "http://bucket/data.csv" is neither the URI of an artifact an artifact store can hold (file:///… or s3://…, such as an output of an earlier run: pipectl artifacts ls RUN) nor that of an object to import (gs://BUCKET/KEY, s3://BUCKET/KEY, oci://IMAGE)`,
			`7:35 params.other.default: invalid default of artifact parameter "other" (Dataset): expected the URI of an artifact in the artifact store`,
		}},
		{"artifact-metadata", []string{
			`6:30 params.n.metadata: parameter "n" (int) is a value: only an artifact parameter has metadata`,
			`7:35 params.data.metadata: expected a mapping (the artifact's metadata), got a list`,
			`10:19 params.other.metadata: unknown parameter "nope" in {{params.nope}}`,
			`10:42 params.other.metadata: parameter "data" is an artifact (Dataset): metadata may embed parameters that are values`,
			`10:93 params.other.metadata: unclosed reference`,
			`10:62 params.other.metadata: unknown step "x" in {{steps.x.outputs.y}} (steps: fit)`,
		}},
		{"artifact-metadata-steps", []string{
			`8:188 params.data.metadata: "{{item}}": metadata may embed {{params.NAME}} and {{steps.STEP.outputs.OUTPUT}} only`,
			`8:19 params.data.metadata: unknown step "nope" in {{steps.nope.outputs.n}} (steps: make, loop, self, last, late)`,
			`8:50 params.data.metadata: step "make" (component make-data) has no output "rows" (outputs: data, count)`,
			`8:84 params.data.metadata: output "data" of step "make" is an artifact (Dataset): an artifact parameter's metadata embeds output parameters (values)`,
			`8:118 params.data.metadata: output "score" of loop step "loop" is collected into a JSON list: an artifact parameter's metadata embeds single values`,
			`8:153 params.data.metadata: {{steps.last.outputs.count}} is an output of finally step "last": the steps reading artifact parameter "data" run before finally steps`,
			`24:22 steps[2].inputs.models: step "self" reads artifact parameter "mine", whose metadata embeds its own output "lrs" (params.mine.metadata): a step cannot wait for itself`,
			`30:20 finally[1].inputs.data: finally step "late" reads artifact parameter "made", whose metadata embeds output "count" of step "make" (params.made.metadata): finally steps run after the other steps whatever their outcome, waiting for none of them`,
		}},
		{"artifact-metadata-cycle", []string{`10:5 steps[0]: dependency cycle: a → b → a`}},
		{"oneof", []string{
			`12:16 outputs.one.oneOf: expected two or more step outputs`,
			`13:51 outputs.twice.oneOf[1]: step "data" is a candidate twice`,
			`14:51 outputs.types.oneOf[1]: output "score" of step "score" is float, the first candidate's is int`,
			`15:9 outputs.form: expected a step output "{{steps.STEP.outputs.OUTPUT}}" or {oneOf: [`,
			`16:50 outputs.kinds.oneOf[1]: output "model" of step "score" is Model, the first candidate's is Dataset`,
		}},
		{"artifact-literal", []string{`9:13 steps[0].inputs.data: input "data" is an artifact (Dataset): expected a step output`}},
		{"huge-gang", []string{
			`8:26 steps[0].distributed.nodes: expected 1 to 10000 nodes, got 3074457345618258603`,
			`11:26 steps[1].distributed.nodes: expected 1 to 10000 nodes, got 3000000000`,
			`11:52 steps[1].distributed.procsPerNode: expected 1 to 1024, got -1`,
			`11:69 steps[1].distributed.maxRestarts: expected 0 to 1000, got 2147483648`,
			`14:14 steps[2].retries: expected 0 to 1000, got 5000`,
			`18:24 steps[2].distributed.resources.gpu: expected 0 to 1024 GPUs, got "-1"`,
			`15:5 steps[2].distributed: nodes × procsPerNode = 10000 × 1024 = 10240000 ranks: expected at most 1000000 (WORLD_SIZE)`,
		}},
		{"stall-timeout", []string{
			`8:43 steps[0].distributed.stallTimeout: expected a duration of at least 1s (or no stallTimeout: no stall detection), got "0s"`,
			`11:43 steps[1].distributed.stallTimeout: expected a duration of at least 1s (or no stallTimeout: no stall detection), got "500ms"`,
		}},
		{"checkpoint", []string{
			`8:48 steps[0].distributed.checkpoint.keep: expected 1 to 100 checkpoints kept, got 500`,
			`11:61 steps[1].distributed.checkpoint.keep: expected 1 to 100 checkpoints kept, got -1`,
			`11:49 steps[1].distributed.checkpoint.every: expected a duration of at least 1s, got "10ms"`,
		}},
		{"stall-timeout-default", []string{
			`5:29 distributed.stallTimeout: expected a duration of at least 1s (or no stallTimeout: no stall detection), got "200ms"`,
		}},
		{"env-placeholder", []string{
			`12:29 steps[0].env[1].value: unknown parameter "nope" (params: rows)`,
			`13:29 steps[0].env[2].value: an env value cannot use {{steps.data.outputs.data}}`,
			`14:28 steps[0].env[3].value: unknown reference {{inputs.rows}}`,
		}},
		{"secrets", []string{
			`14:15 steps[0].secrets[0].env: variable TOKEN is given twice (by the step's or the component's env, or another secret)`,
			`15:15 steps[0].secrets[1].env: invalid environment variable name "1BAD"`,
			`16:15 steps[0].secrets[2].env: variable AWS_SECRET_ACCESS_KEY is pipectl's own`,
			`17:15 steps[0].secrets[3].env: variable RANK is pipectl's own`,
			`18:27 steps[0].secrets[4].secret: invalid Secret name "Not_A_Name": a lowercase RFC 1123 subdomain`,
			`19:37 steps[0].secrets[5].key: invalid Secret key "a/b": expected letters, digits`,
			`20:28 steps[0].secrets[6].secret: unknown parameter "nope" (params: count, name)`,
			`21:28 steps[0].secrets[7].secret: parameter "count" is int: a Secret's name is a string`,
			`22:28 steps[0].secrets[8].secret: expected a Secret's name, a whole {{params.NAME}} or {{steps.STEP.outputs.NAME}}, got "x-{{params.name}}"`,
			`26:26 steps[1].secrets[0].secret: output "count" of step "data" is int: a Secret's name is a string`,
			`27:26 steps[1].secrets[1].secret: unknown step "nope"`,
			`27:59 steps[1].secrets[1].key: invalid Secret key "k/"`,
			`32:26 steps[2].secrets[0].secret: a distributed step's Secret is named in the file or by a param, not by a step's output`,
		}},
		{"loops", []string{
			`11:19 steps[0].loop.items: cannot loop over parameter "n": it is int, expected json (a JSON list)`,
			`15:19 steps[1].loop.items: cannot loop over "3": expected a list`,
			`20:18 steps[2].inputs.lr: unknown item field: item 1 of the loop has no field "lr"`,
			`23:18 steps[3].inputs.lr: type mismatch: output "score" of loop step "c" is collected into a JSON list (json), input "lr" expects float (a single value)`,
			`23:52 steps[3].inputs.tag: {{item}} is defined only in a step with loop: (step "d" has none)`,
			`26:19 steps[4].loop.items: cannot loop over parameter "notlist": its default: expected a JSON list`,
			`31:18 steps[5].inputs.lr: {{run.status}} is defined only in a finally step`,
			`30:11 steps[5].when: output "score" of loop step "c" is collected into a JSON list: a condition compares single values`,
			`35:18 finally[0].inputs.lr: finally step "g" cannot depend on the iterations of loop step "c"`,
			`35:18 finally[0].inputs.lr: type mismatch: output "score" of loop step "c" is collected`,
			`38:13 finally[1].after[0]: finally step "h" cannot depend on the iterations of loop step "a"`,
		}},
		{"trigger", []string{
			`11:14 steps[2].trigger: unknown trigger "always" (expected succeeded, the default: the step runs once every step it depends on succeeded; or completed: once each of them ended, whatever its outcome)`,
			`16:55 steps[3].inputs.data: input "data" is given output "data" of step "make", which is not there when that step did not succeed: a step with trigger: completed runs even when the steps it depends on did not succeed, and the input then takes its default; expected a default (or optional: true) on input "data" of component use`,
			`16:19 steps[3].inputs.msg: input "msg" is given output "msg" of step "make", which is not there when that step did not succeed`,
			`22:53 steps[4].inputs.ns: input "ns" is given the outputs of loop step "gen" collected from its iterations: not supported on a step with trigger: completed`,
			`22:17 steps[4].inputs.t: {{steps.make.outputs.msg}} inside a text: a step with trigger: completed runs even when the steps it depends on did not succeed, and that output may not be there; give it whole to an input with a default`,
			`19:11 steps[4].when: the condition reads output "msg" of step "make"`,
			`20:19 steps[4].loop.items: the items are output "list" of step "make"`,
			`23:36 steps[4].secrets[0].secret: the Secret's name is output "msg" of step "make"`,
			`24:25 steps[4].resources.memory: the value is output "msg" of step "make"`,
		}},
		{"fractions", []string{
			`8:40 steps[0].loop.parallelism: expected a whole number, got "1.5"`,
			`9:14 steps[0].retries: expected a whole number, got "1.9"`,
			`12:26 steps[1].distributed.nodes: expected a whole number, got "1.5"`,
		}},
		{"multi-document", []string{`9:1 a second YAML document (after ---)`}},
		{"latin1", []string{`3:21 byte 0xE9 is not UTF-8 text`}},
		{"empty", []string{`1:1 the file holds no YAML`}},
		{"several", []string{
			`8:5 steps[0].retires: unknown field "retires"`,
			`1:13 apiVersion: expected apiVersion pipectl.dev/v1alpha1, got "pipectl.dev/v1alpha2"`,
			`14:7 steps[1].inputs.bogus: component fit has no input "bogus" (inputs: data, epochs, note)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tt.file+".yaml")
			_, err := Load(path)
			if err == nil {
				t.Fatal("Load succeeded, want errors")
			}
			got := yamlfile.Split(err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, e := range got {
				var ye *yamlfile.Error
				if !errors.As(e, &ye) {
					t.Fatalf("error %d is %T, want *yamlfile.Error: %v", i, e, e)
				}
				if ye.File != path {
					t.Errorf("error %d names file %q, want %q", i, ye.File, path)
				}
				loc := strings.TrimPrefix(ye.Error(), path+":")
				loc = strings.Replace(loc, ": ", " ", 1)
				if !strings.HasPrefix(loc, tt.want[i]) {
					t.Errorf("error %d =\n  %s\nwant prefix\n  %s", i, loc, tt.want[i])
				}
			}
		})
	}
}

func TestResolveParams(t *testing.T) {
	p, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.ResolveParams(map[string]string{"epochs": " 7", "tag": "{{literal}}"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"epochs": " 7", "tag": "{{literal}}", "flag": "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResolveParams (-want +got):\n%s", diff)
	}
	_, err = p.ResolveParams(map[string]string{"epochs": "many", "nope": "1"})
	if err == nil {
		t.Fatal("want errors for a bad value and an unknown name")
	}
	for _, frag := range []string{`-p epochs: expected a whole number (int), got "many"`, `-p nope: pipeline valid has no parameter "nope" (params: epochs, tag, flag)`} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
}

func TestCondition(t *testing.T) {
	tests := []struct {
		when   string
		typ    string // the type the sides are compared as
		values map[string]string
		want   bool
	}{
		{"{{params.flag}} == true", "bool", map[string]string{"flag": "true"}, true},
		{"{{params.flag}} == true", "bool", map[string]string{"flag": "True"}, true},
		{"{{params.flag}} == true", "string", map[string]string{"flag": "True"}, false},
		{"{{params.flag}}", "bool", map[string]string{"flag": "false"}, false},
		{"{{params.flag}}", "bool", map[string]string{"flag": "1"}, true},
		{"{{params.n}} == 7", "int", map[string]string{"n": "+007"}, true},
		{"{{params.n}} == 12345678901234567890", "int", map[string]string{"n": "12345678901234567891"}, false},
		{"{{params.x}} == 1", "float", map[string]string{"x": "1.0"}, true},
		{`{{params.j}} == '{"b": [1.0], "a": null}'`, "json", map[string]string{"j": `{"a":null,"b":[1]}`}, true},
		{"{{params.mode}} != 'fast'", "string", map[string]string{"mode": "fast"}, false},
		{"{{params.mode}} != fast", "string", map[string]string{"mode": "slow"}, true},
		{"{{params.mode}} == fast", "string", map[string]string{"mode": " fast\n"}, true},
	}
	for _, tt := range tests {
		c, _, err := ParseCondition(tt.when)
		if err != nil {
			t.Fatalf("%s: %v", tt.when, err)
		}
		side := func(b Binding) string {
			if b.Param != "" {
				return tt.values[b.Param]
			}
			return b.Literal
		}
		got := components.Equal(tt.typ, side(c.Left), side(c.Right)) == (c.Op == "==")
		if got != tt.want {
			t.Errorf("%s as %s with %q = %v, want %v", tt.when, tt.typ, tt.values, got, tt.want)
		}
	}
	if _, _, err := ParseCondition("{{steps.a.outputs.b}} == {{nope}}"); err == nil {
		t.Error("want an error for an unknown reference")
	}
}

// TestParseWhen: comparisons joined by && are each a condition when every
// part holds an operator or a reference; otherwise the when is one
// condition whose literal holds "&&". Ordered operators compare in order.
func TestParseWhen(t *testing.T) {
	for _, tc := range []struct {
		when string
		want []Condition
	}{
		{"{{params.n}} > 5", []Condition{{Left: Binding{Param: "n"}, Op: ">", Right: Binding{Literal: "5"}}}},
		{"{{params.n}} <= '5'", []Condition{{Left: Binding{Param: "n"}, Op: "<=", Right: Binding{Literal: "5"}}}},
		{"{{params.a}} == x && {{params.n}} >= 2", []Condition{
			{Left: Binding{Param: "a"}, Op: "==", Right: Binding{Literal: "x"}},
			{Left: Binding{Param: "n"}, Op: ">=", Right: Binding{Literal: "2"}}}},
		{"{{params.a}} && 3 != 0", []Condition{
			{Left: Binding{Param: "a"}, Op: "==", Right: Binding{Literal: "true"}},
			{Left: Binding{Literal: "3"}, Op: "!=", Right: Binding{Literal: "0"}}}},
		{"{{params.a}} == x && y", []Condition{{Left: Binding{Param: "a"}, Op: "==", Right: Binding{Literal: "x && y"}}}},
	} {
		got, _, err := ParseWhen(tc.when)
		if err != nil {
			t.Errorf("%s: %v", tc.when, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.when, diff)
		}
	}
	_, err := Parse("when.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: when}
params:
  mode: {type: string, default: fast}
  n: {type: int, default: 3}
steps:
  - name: a
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: a}, command: [true]}
    when: "{{params.n}} > 1 && {{params.mode}} < fast"
`))
	if want := `when.yaml:10:11: steps[0].when: < compares int or float values`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse: %v\nwant an error containing %q", err, want)
	}
}

// TestNullIsNotGiven: a null, ~ or empty default or step input is no value
// (not the text "null" or "~"); a quoted "null" is the text.
func TestNullIsNotGiven(t *testing.T) {
	p, err := Parse("null.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nulls}
params:
  a: {type: string, default: null}
  b: {type: string, default: ~}
  c: {type: string, default: }
  d: {type: string, default: "null"}
  e: {type: json, default: ~}
steps:
  - name: s
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: s}
      inputs: [{name: x, type: string, default: ~}, {name: y, type: int, default: 3}]
      command: [echo, "{{inputs.x}}", "{{inputs.y}}"]
    inputs: {x: "{{params.d}}", y: null}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.ResolveParams(map[string]string{"a": "A", "e": "null"})
	for _, frag := range []string{`parameter "b" (string) has no default`, `parameter "c" (string) has no default`} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("ResolveParams error %v lacks %q", err, frag)
		}
	}
	if diff := cmp.Diff(map[string]string{"a": "A", "d": "null", "e": "null"}, got); diff != "" {
		t.Errorf("ResolveParams (-want +got):\n%s", diff)
	}
	s := p.Step("s")
	if diff := cmp.Diff(map[string]Binding{"x": {Param: "d"}}, s.Bindings()); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if in, _ := s.Resolved.Input("x"); in.HasDefault() || !in.Required() {
		t.Errorf("input x with default ~ has a default")
	}
	_, err = Parse("null.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: nulls}
steps:
  - name: s
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: s}
      inputs: [{name: x, type: string, default: ~}]
      command: [echo, "{{inputs.x}}"]
    inputs: {x: ~}
`))
	if want := `null.yaml:5:5: steps[0]: step "s" does not give component s its required input "x" (string)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestStepOutputInsideText: a step output parameter may sit inside a
// longer text of a step input; an artifact or a loop step's collected
// output only whole, and an env value takes none.
func TestStepOutputInsideText(t *testing.T) {
	const comp = `{apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, inputs: [{name: msg, type: string, optional: true}], outputs: [{name: n, type: int}, {name: d, type: Dataset}], command: [c, "{{outputs.n.path}}", "{{outputs.d.path}}"]}`
	_, err := Parse("embed.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: embed}
steps:
  - name: a
    component: `+comp+`
  - name: l
    component: `+comp+`
    loop: {items: [1, 2]}
  - name: ok
    component: `+comp+`
    inputs: {msg: "n={{steps.a.outputs.n}}"}
  - name: art
    component: `+comp+`
    inputs: {msg: "d={{steps.a.outputs.d}}"}
  - name: coll
    component: `+comp+`
    inputs: {msg: "n={{steps.l.outputs.n}}"}
  - name: env
    component: `+comp+`
    env: [{name: N, value: "{{steps.a.outputs.n}}"}]
`))
	for _, want := range []string{
		`embed.yaml:15:19: steps[3].inputs.msg: output "d" of step "a" is an artifact (Dataset): it can only be given whole`,
		`embed.yaml:18:19: steps[4].inputs.msg: output "n" of loop step "l" is collected into a JSON list: it can only be given whole`,
		`steps[5].env[0].value: an env value cannot use {{steps.a.outputs.n}}`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse: %v\nwant an error containing %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "steps[2]") {
		t.Errorf("Parse refused step ok: %v", err)
	}
}
