package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/yamlfile"
)

// TestNestedExpand loads a pipeline that uses one pipeline twice (which
// itself nests one level deeper) and checks the expanded steps: names,
// dependencies, the values the inner steps get and the outputs used
// downstream.
func TestNestedExpand(t *testing.T) {
	p, err := Load("testdata/nested/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.Steps {
		names = append(names, s.Name+"="+s.Resolved.Metadata.Name)
	}
	want := []string{
		"small.data=make-data", "small.train.fit=fit", "small.train.sweep=score", "small.train.pick=pick",
		"big.data=make-data", "big.train.fit=fit", "big.train.sweep=score", "big.train.pick=pick",
		"score=score",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	deps := map[string][]string{}
	for _, s := range p.Steps {
		deps[s.Name] = s.Deps()
	}
	// After a nested step is after its inner steps that no other waits for.
	small := []string{"small.train.fit", "small.train.pick"}
	wantDeps := map[string][]string{
		"small.data":        {},
		"small.train.fit":   {"small.data"},
		"small.train.sweep": {},
		"small.train.pick":  {"small.train.sweep"},
		"big.data":          small,
		"big.train.fit":     append([]string{"big.data"}, small...),
		"big.train.sweep":   small,
		"big.train.pick":    append([]string{"big.train.sweep"}, small...),
		"score":             {"big.train.fit", "big.train.pick", "small.data"},
	}
	if diff := cmp.Diff(wantDeps, deps); diff != "" {
		t.Errorf("deps (-want +got):\n%s", diff)
	}
	bindings := map[string]map[string]Binding{}
	for _, name := range []string{"small.data", "big.data", "small.train.fit", "big.train.pick", "score"} {
		bindings[name] = p.Step(name).Bindings()
	}
	wantBindings := map[string]map[string]Binding{
		"small.data":      {"rows": {Param: "rows"}},
		"big.data":        {"rows": {Literal: "500"}},
		"small.train.fit": {"data": {Step: "small.data", Output: "data"}, "epochs": {Literal: "3"}, "note": {Literal: "e=3"}},
		"big.train.pick":  {"scores": {Step: "big.train.sweep", Output: "score"}, "models": {Step: "big.train.sweep", Output: "model"}},
		"score":           {"lr": {Step: "small.data", Output: "count"}, "tag": {Literal: "rows {{params.rows}}"}},
	}
	if diff := cmp.Diff(wantBindings, bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	var noCache []string
	for _, s := range p.Steps {
		if !s.CacheEnabled() {
			noCache = append(noCache, s.Name)
		}
	}
	if diff := cmp.Diff([]string{"big.data", "big.train.fit", "big.train.sweep", "big.train.pick"}, noCache); diff != "" {
		t.Errorf("steps with cache: false (-want +got):\n%s", diff)
	}
	sweep := p.Step("big.train.sweep")
	if sweep.When != "3 != 0" {
		t.Errorf("big.train.sweep when = %q, want %q", sweep.When, "3 != 0")
	}
	if b, err := sweep.ItemsBinding(); err != nil || b.Literal != "[0.5]" {
		t.Errorf("big.train.sweep items = %+v, %v; want the literal [0.5]", b, err)
	}
}

// TestNestedOutputs checks a pipeline's declared outputs, resolved to its
// expanded steps, and the component a step that uses it sees.
func TestNestedOutputs(t *testing.T) {
	p, err := Load("testdata/nested/stage.pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Binding{}
	for _, name := range p.OutputOrder {
		got[name], _ = p.Output(name)
	}
	want := map[string]Binding{"model": {Step: "train.fit", Output: "model"}, "count": {Step: "data", Output: "count"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	c := p.component()
	var ios []string
	for _, in := range c.Inputs {
		ios = append(ios, "in:"+in.Name+":"+in.Type)
	}
	for _, out := range c.Outputs {
		ios = append(ios, "out:"+out.Name+":"+out.Type)
	}
	if diff := cmp.Diff([]string{"in:rows:int", "out:model:Model", "out:count:int"}, ios); diff != "" {
		t.Errorf("component (-want +got):\n%s", diff)
	}
	if _, err := p.ResolveParams(nil); err == nil || !strings.Contains(err.Error(), `parameter "rows" (int) has no default`) {
		t.Errorf("ResolveParams: %v", err)
	}
	train, err := Load("testdata/nested/train.pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.ResolveParams(nil); err == nil || !strings.Contains(err.Error(), `parameter "data" is an artifact (Dataset): give it with -p data=URI, the URI of an artifact in the artifact store`) {
		t.Errorf("ResolveParams of a pipeline with an artifact param: %v", err)
	}
}

// TestNestedInvalid checks each refused use of a pipeline as a component:
// file, position and message of every error.
func TestNestedInvalid(t *testing.T) {
	const dir = "testdata/nested/"
	tests := []struct {
		file string
		// want lists "FILE:line:col field: message fragment" for each error, in order.
		want []string
	}{
		{"self.pipeline.yaml", []string{
			`self.pipeline.yaml:7:16 steps[0].component: recursive pipeline: ` + dir + `self.pipeline.yaml uses ` + dir + `self.pipeline.yaml (a pipeline cannot use itself`,
		}},
		{"ring-a.pipeline.yaml", []string{
			`ring-b.pipeline.yaml:9:16 steps[1].component: recursive pipeline: ` + dir + `ring-a.pipeline.yaml uses ` + dir + `ring-b.pipeline.yaml uses ` + dir + `ring-a.pipeline.yaml`,
		}},
		{"art-default.yaml", []string{
			`art-default.pipeline.yaml:6:34 params.data.default: artifact parameter "data" (Dataset) of a pipeline used as a step's component cannot have a default`,
		}},
		{"trigger.yaml", []string{
			`trigger.yaml:9:5 steps[0].trigger: step "a" uses pipeline stage as its component: trigger is not supported on such a step`,
			`trigger.yaml:12:5 steps[1].loop: step "b" loops over the steps of testdata/nested/completed.pipeline.yaml, whose step tidy has trigger: completed: not supported in a looped pipeline yet`,
		}},
		{"invalid.yaml", []string{
			`invalid.yaml:20:16 steps[3].component: pipeline with-finally (` + dir + `with-finally.pipeline.yaml) has finally steps`,
			`invalid.yaml:8:5 steps[0]: step "a" does not give component stage its required input "rows" (int)`,
			`invalid.yaml:14:11 steps[1].when: cannot compare with "x"`,
			`invalid.yaml:18:18 steps[2].inputs.lr: step "b" (component stage) has no output "modell" (outputs: model, count)`,
			`invalid.yaml:15:5 steps[1].retries: step "b" uses pipeline stage as its component: retries is not supported`,
			`invalid.yaml:23:8 outputs.bad: expected a step output "{{steps.STEP.outputs.OUTPUT}}", got "c.score"`,
			`invalid.yaml:24:9 outputs.gone: unknown step "x" (steps: a, b, c, d)`,
			`invalid.yaml:25:12 outputs.missing: step "c" (component score) has no output "nope" (outputs: score, model)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Load(dir + tt.file)
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
				loc := strings.Replace(strings.TrimPrefix(ye.Error(), dir), ": ", " ", 1)
				if !strings.HasPrefix(loc, tt.want[i]) {
					t.Errorf("error %d =\n  %s\nwant prefix\n  %s", i, loc, tt.want[i])
				}
			}
		})
	}
}

// TestNestedValues checks how a value given to a nested pipeline's param
// reaches the inner steps: a whole value keeps its YAML node (so a literal
// stays as written), a value inside a longer text is its text, and a step
// output inside a longer text its reference there.
func TestNestedValues(t *testing.T) {
	const sub = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: sub}
params:
  x: {type: string}
  f: {type: float, default: 1.50}
steps:
  - name: s
    component: ../components/score.yaml
    inputs: {lr: "{{params.f}}", tag: "x={{params.x}} f={{params.f}}"}
outputs:
  score: "{{steps.s.outputs.score}}"
`
	tests := []struct {
		name, inputs string
		want         map[string]Binding
		wantErr      string
	}{
		{"literals", `{x: "a{{params.p}}b", f: 2.0}`, map[string]Binding{"lr": {Literal: "2.0"}, "tag": {Literal: "x=a{{params.p}}b f=2.0"}}, ""},
		{"default", `{x: "{{params.p}}"}`, map[string]Binding{"lr": {Literal: "1.50"}, "tag": {Literal: "x={{params.p}} f=1.50"}}, ""},
		{"whole output", `{x: plain, f: "{{steps.up.outputs.score}}"}`, map[string]Binding{"lr": {Step: "up", Output: "score"}, "tag": {Literal: "x=plain f={{steps.up.outputs.score}}"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comps, err := filepath.Abs("testdata/components")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "sub.pipeline.yaml"), []byte(strings.ReplaceAll(sub, "../components", comps)), 0o644); err != nil {
				t.Fatal(err)
			}
			main := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: main}
params:
  p: {type: string, default: v}
steps:
  - name: up
    component: ../components/score.yaml
    inputs: {lr: 1}
  - name: n
    component: sub.pipeline.yaml
    after: [up]
    inputs: ` + tt.inputs + "\n"
			p, err := Parse(filepath.Join(dir, "main.yaml"), []byte(strings.ReplaceAll(main, "../components", comps)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: %v\nwant an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Step("n.s").Bindings()); diff != "" {
				t.Errorf("bindings of n.s (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNestedWhen: a when on the step that uses a pipeline holds for each
// inner step (in the outer pipeline's terms), joined with && to an inner
// step's own.
func TestNestedWhen(t *testing.T) {
	p, err := Parse("testdata/nested/when.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: when}
params:
  rows: {type: int, default: 5}
steps:
  - name: a
    component: stage.pipeline.yaml
    inputs: {rows: 1}
  - name: b
    component: ../components/make-data.yaml
    when: "{{steps.a.outputs.count}} == {{params.rows}}"
  - name: c
    component: ../components/make-data.yaml
    when: "{{params.rows}} != 3"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Step("b").When, "{{steps.a.data.outputs.count}} == {{params.rows}}"; got != want {
		t.Errorf("b when = %q, want %q", got, want)
	}
	// An inner step with a when of its own runs when both hold.
	p, err = Parse("testdata/nested/when.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: when}
params:
  rows: {type: int, default: 5}
steps:
  - name: a
    component: stage.pipeline.yaml
    inputs: {rows: 1}
    when: "{{params.rows}} >= 5"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Step("a.train.sweep").When, "{{params.rows}} >= 5 && 3 != 0"; got != want {
		t.Errorf("a.train.sweep when = %q, want %q", got, want)
	}
	if got, want := p.Step("a.data").When, "{{params.rows}} >= 5"; got != want {
		t.Errorf("a.data when = %q, want %q", got, want)
	}
	p, err = Parse("testdata/nested/when.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: when}
params:
  rows: {type: int, default: 5}
steps:
  - name: a
    component: ../components/make-data.yaml
  - name: b
    component: data.pipeline.yaml
    after: [a]
    when: "{{steps.a.outputs.count}} != {{params.rows}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.make", "b.again"} {
		if got, want := p.Step(name).When, "{{steps.a.outputs.count}} != {{params.rows}}"; got != want {
			t.Errorf("%s when = %q, want %q", name, got, want)
		}
	}
}

// TestNestedSecretName: an inner step's Secret named by the nested
// pipeline's param is named by what the step using the pipeline gives it:
// a name, the outer pipeline's param or a step's output; text around a
// reference is refused.
func TestNestedSecretName(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	write("inner.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: inner}
params:
  sec: {type: string}
steps:
  - name: use
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [prog]}
    secrets: [{env: TOKEN, secret: "{{params.sec}}", key: token}]
`)
	path := write("outer.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: outer}
params:
  top: {type: string, default: top-secret}
steps:
  - name: named
    component: inner.yaml
    inputs: {sec: written-name}
  - name: passed
    component: inner.yaml
    inputs: {sec: "{{params.top}}"}
`)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range map[string]string{"named.use": "written-name", "passed.use": "{{params.top}}"} {
		if s := p.Step(step); s == nil || len(s.Secrets) != 1 || s.Secrets[0].Secret != want {
			t.Errorf("step %s: secrets %+v, want the Secret %q", step, s, want)
		}
	}
	fromStep := write("from-step.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: from-step}
steps:
  - name: out
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: o}, command: [prog], outputs: [{name: n, type: string}]}
  - name: uses
    component: inner.yaml
    inputs: {sec: "{{steps.out.outputs.n}}"}
`)
	p, err = Load(fromStep)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Step("uses.use"); s == nil || len(s.Secrets) != 1 || s.Secrets[0].Secret != "{{steps.out.outputs.n}}" || !slices.Contains(s.Deps(), "out") {
		t.Errorf("uses.use: %+v, want the Secret named by out's output, after out", s)
	}
	bad := write("bad.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: bad}
params:
  p: {type: string, default: x}
steps:
  - name: uses
    component: inner.yaml
    inputs: {sec: "x-{{params.p}}"}
`)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "a Secret's name is written in the file, a string param or a step's string output") {
		t.Errorf("Load(a Secret named by a text) = %v", err)
	}
}

// TestNestedLoop: a loop step using a pipeline gives each of its steps its
// loop and Body, and a step of it reads another's output of the same
// iteration; a pipeline's output naming a loop step is the collected list
// (json) to the step using the pipeline; what a looped pipeline cannot
// hold is refused at the loop.
func TestNestedLoop(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	const comp = `{apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [prog], inputs: [{name: x, type: string, optional: true}], outputs: [{name: o, type: string}]}`
	const jsonComp = `{apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: j}, command: [prog], outputs: [{name: o, type: json}]}`
	write("body.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: body}
params:
  w: {type: string}
steps:
  - name: a
    component: `+comp+`
    inputs: {x: "{{params.w}}"}
  - name: b
    component: `+comp+`
    inputs: {x: "{{steps.a.outputs.o}}"}
outputs:
  o: "{{steps.b.outputs.o}}"
`)
	write("fan.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: fan}
steps:
  - name: l
    component: `+comp+`
    loop: {items: [1, 2]}
outputs:
  all: "{{steps.l.outputs.o}}"
`)
	path := write("outer.yaml", `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: outer}
steps:
  - name: each
    component: body.yaml
    loop: {items: ["p", "q"], parallelism: 1}
    inputs: {w: "{{item}}"}
  - name: fan
    component: fan.yaml
  - name: use
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: u}, command: [prog], inputs: [{name: all, type: json}, {name: os, type: json}]}
    inputs: {all: "{{steps.fan.outputs.all}}", os: "{{steps.each.outputs.o}}"}
`)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"each.a", "each.b"} {
		s := p.Step(name)
		if s == nil || s.Loop == nil || s.Loop.Parallelism != 1 || s.Body != "each" {
			t.Fatalf("step %s: %+v, want the loop of each and Body each", name, s)
		}
	}
	if !p.Step("each.b").SameIteration(p.Step("each.a")) || p.Step("use").SameIteration(p.Step("each.b")) || p.Step("fan.l").Body != "" {
		t.Errorf("SameIteration: each.b/each.a true, use/each.b false, fan.l no Body")
	}
	if b := p.Step("use").Bindings(); b["all"] != (Binding{Step: "fan.l", Output: "o"}) || b["os"] != (Binding{Step: "each.b", Output: "o"}) {
		t.Errorf("use's inputs: %+v", b)
	}
	looped := func(body string) (*Pipeline, error) {
		write("b2.yaml", "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: b2}\nparams:\n  w: {type: string, default: d}\n  ws: {type: json, default: []}\nsteps:\n"+body)
		return Load(write("bad.yaml", "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: bad}\nsteps:\n  - name: s\n    component: b2.yaml\n    loop: {items: [1]}\n    inputs: {w: \"{{item}}\", ws: \"{{item}}\"}\n"))
	}
	// A loop step of a looped pipeline loops over the product of the
	// pipeline's items and its own: its item is {{item.inner}}, the
	// pipeline's {{item.outer}}; it reads a's iteration of the same outer
	// item (Nested), and its when holds both conditions.
	p, err = looped("  - name: a\n    component: " + comp + "\n  - name: l\n    component: " + comp + "\n    loop: {items: [x, y], parallelism: 3}\n    when: \"{{item}} != y && {{steps.a.outputs.o}} != z\"\n    inputs: {x: \"{{item}}/{{params.w}}/{{steps.a.outputs.o}}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	l := p.Step("s.l")
	if l == nil || !l.Nested || l.Body != "s" || l.Loop.Parallelism != 3 {
		t.Fatalf("s.l: %+v, want a nested loop step of s's body", l)
	}
	lists, err := l.ProductLists()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ProductList{{Name: NestOuter, Binding: Binding{Literal: "[1]"}}, {Name: NestInner, Binding: Binding{Literal: `["x","y"]`}}}, lists); diff != "" {
		t.Errorf("s.l's product (-want +got):\n%s", diff)
	}
	if b := l.Bindings()["x"]; b.Literal != "{{item.inner}}/{{item.outer}}/{{steps.s.a.outputs.o}}" {
		t.Errorf("s.l's input x: %+v", b)
	}
	if l.When != "{{item.inner}} != y && {{steps.s.a.outputs.o}} != z" || !l.SameIteration(p.Step("s.a")) {
		t.Errorf("s.l's when %q, want its own item and s.a's output of the same outer item", l.When)
	}
	// Its own list may be the outer item (a param given it), or a field of
	// it: a list that differs from item to item.
	p, err = looped("  - name: l\n    component: " + comp + "\n    loop: {items: \"{{params.ws}}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if lists, err := p.Step("s.l").ProductLists(); err != nil || len(lists) != 2 || !lists[1].Item || lists[1].Field != NestOuter {
		t.Errorf("s.l over the outer item: product %+v, %v", lists, err)
	}
	// A step of the pipeline reads a nested loop step's outputs collected
	// per outer iteration.
	p, err = looped("  - name: l\n    component: " + comp + "\n    loop: {items: [1, 2]}\n  - name: b\n    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: b}, command: [prog], inputs: [{name: x, type: json}]}\n    inputs: {x: \"{{steps.l.outputs.o}}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if b, l := p.Step("s.b"), p.Step("s.l"); b.SameIteration(l) || !b.OuterIteration(l) {
		t.Errorf("s.b reading s.l: same iteration %v, per outer iteration %v", b.SameIteration(l), b.OuterIteration(l))
	}
	for _, bad := range []struct{ body, want string }{
		{"  - name: a\n    component: " + jsonComp + "\n  - name: l\n    component: " + comp + "\n    loop: {items: \"{{steps.a.outputs.o}}\"}\n", `and its step l loops of its own: its items are given by output "o" of step a of the same looped pipeline: a loop inside a looped pipeline over a list each iteration gives is not supported yet`},
		{"  - name: l\n    component: " + comp + "\n    loop: {product: {a: [1]}}\n", "a loop.product inside a looped pipeline is not supported yet"},
		{"  - name: l\n    component: " + comp + "\n    loop: {items: [1]}\n  - name: m\n    component: " + comp + "\n    loop: {items: [2]}\n    inputs: {x: \"{{steps.l.outputs.o}}\"}\n", "whose step s.m loops of its own and reads the outputs of step s.l, which loops of its own too: not supported yet"},
	} {
		if _, err := looped(bad.body); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("a loop in a looped pipeline: Load = %v\nwant an error containing %q", err, bad.want)
		}
	}
	// A when on another step's output, or on a param given the item,
	// compares them iteration by iteration.
	p, err = looped("  - name: a\n    component: " + comp + "\n  - name: b\n    component: " + comp + "\n    when: \"{{steps.a.outputs.o}} == x && {{params.w}} != 2\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Step("s.b"); s == nil || s.When != "{{steps.s.a.outputs.o}} == x && {{item}} != 2" {
		t.Errorf("s.b: %+v, want its when on s.a's output and the item", s)
	}
	if _, err := looped("  - name: a\n    component: " + comp + "\n  - name: b\n    component: " + comp + "\n    resources: {cpu: \"{{steps.a.outputs.o}}\"}\n"); err == nil || !strings.Contains(err.Error(), `step b: resources.cpu: a resource given by output "o" of step a of the same looped pipeline is not supported`) {
		t.Errorf("resources given by another step of a looped pipeline: Load = %v", err)
	}
	// A distributed step's launcher starts each iteration's gang: its when
	// cannot hold iteration by iteration.
	if _, err := looped("  - name: d\n    component: " + comp + "\n    distributed: {nodes: 2}\n    when: \"{{params.w}} == 1\"\n"); err == nil || !strings.Contains(err.Error(), "whose distributed step d has a when: not supported in a looped pipeline") {
		t.Errorf("a distributed step with a when in a looped pipeline: Load = %v", err)
	}
	if _, err := Parse(filepath.Join(dir, "d.yaml"), []byte("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: d}\nsteps:\n  - name: d\n    component: "+comp+"\n    distributed: {nodes: 2}\n    loop: {items: [1]}\n    when: \"{{item}} == 1\"\n")); err == nil || !strings.Contains(err.Error(), "a distributed step's when cannot compare its item") {
		t.Errorf("a distributed loop step's when on its item: %v", err)
	}
	oneOf := write("oneof.yaml", "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: o}\nsteps:\n  - name: l\n    component: "+comp+"\n    loop: {items: [1]}\n  - name: m\n    component: "+comp+"\noutputs:\n  r: {oneOf: [\"{{steps.l.outputs.o}}\", \"{{steps.m.outputs.o}}\"]}\n")
	if _, err := Load(oneOf); err == nil || !strings.Contains(err.Error(), `names loop step "l": a oneOf candidate is one value`) {
		t.Errorf("a oneOf of a loop step's output: %v", err)
	}
}

// fileWriter returns a function writing a file of dir and returning its path.
func fileWriter(t *testing.T, dir string) func(name, text string) string {
	return func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}
