package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/yamlfile"
)

// TestKFPGraph loads KFP v1 graph components as nested pipelines: a graph
// using a graph (componentRef name), tasks named by url (resolved in the
// repository checkout holding the graph) and by relative path, KFP names
// for tasks, inputs and outputs, defaults of graph inputs.
func TestKFPGraph(t *testing.T) {
	p, err := Load("testdata/kfpgraph/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]Binding{}
	for _, s := range p.Steps {
		got[s.Name+"="+s.Resolved.Metadata.Name] = s.Bindings()
	}
	want := map[string]map[string]Binding{
		"twice.inner.add-again=add-numbers": {"first_number": {Step: "twice.inner.add-first", Output: "sum"}, "second_number": {Literal: "0.25"}},
		"twice.inner.add-first=add-numbers": {"first_number": {Param: "start"}},
		"sum.add-again=add-numbers":         {"first_number": {Step: "sum.add-first", Output: "sum"}, "second_number": {Literal: "10"}},
		"sum.add-first=add-numbers":         {"first_number": {Step: "twice.inner.add-again", Output: "sum"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps and their inputs (-want +got):\n%s", diff)
	}
}

// TestKFPGraphInvalid: what a graph gets wrong is reported at its line and
// column in the KFP file's own terms.
func TestKFPGraphInvalid(t *testing.T) {
	const dir = "testdata/kfpgraph/repo/components/"
	_, err := Load("testdata/kfpgraph/invalid.yaml")
	if err == nil {
		t.Fatal("Load succeeded, want errors")
	}
	want := []string{
		`broken/component.yaml:12:50 implementation.graph.tasks.one.arguments.First number.graphInput.inputName: the graph component has no input "z"`,
		`broken/component.yaml:13:11 implementation.graph.tasks.one.arguments.Third number: component add-numbers has no input "Third number" (inputs: First number, Second number)`,
		`broken/component.yaml:15:29 implementation.graph.tasks.two.componentRef.url: cannot resolve https://example.com/add.yaml offline: expected a GitHub file url`,
		`broken/component.yaml:20:9 implementation.graph.tasks.three.isEnabled: KFP task option "isEnabled" is not supported`,
		`broken/component.yaml:19:47 implementation.graph.tasks.three.arguments.First number.taskOutput.taskId: unknown task "nope" (tasks: one, three, two)`,
		`broken/component.yaml:22:51 implementation.graph.outputValues.out.taskOutput.outputName: task "one" (component add-numbers) has no output "Total" (outputs: Sum)`,
		`self/component.yaml:6:23 implementation.graph.tasks.again.componentRef: recursive pipeline: ` + dir + `self/component.yaml uses ` + dir + `self/component.yaml`,
	}
	got := yamlfile.Split(err)
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i, e := range got {
		var ye *yamlfile.Error
		if !errors.As(e, &ye) {
			t.Fatalf("error %d is %T, want *yamlfile.Error: %v", i, e, e)
		}
		loc := strings.Replace(strings.TrimPrefix(ye.Error(), dir), ": ", " ", 1)
		if !strings.HasPrefix(loc, want[i]) {
			t.Errorf("error %d =\n  %s\nwant prefix\n  %s", i, loc, want[i])
		}
	}
}

// TestKFPGraphTypes: a graph's typed task arguments are checked with KFP's
// type rules, reported in the graph's terms.
func TestKFPGraphTypes(t *testing.T) {
	for _, tt := range []struct{ name, typ, want string }{
		{"same type", "Float", ""},
		{"untyped", "", ""},
		{"other type", "CSV", `implementation.graph.tasks.t.arguments.First number: type mismatch: input "x" of the graph is CSV, input "first_number" expects Float`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			typ := ""
			if tt.typ != "" {
				typ = ", type: " + tt.typ
			}
			graph := "name: g\ninputs:\n- {name: x" + typ + "}\nimplementation:\n  graph:\n    tasks:\n      t:\n        componentRef: {url: add/component.yaml}\n        arguments:\n          First number: {graphInput: {inputName: x}}\n"
			src := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: m}\nsteps:\n  - name: s\n    component:\n" + indent(graph, "      ") + "    inputs: {x: 1}\n"
			_, err := Parse("testdata/kfpgraph/repo/components/main.yaml", []byte(src))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Load: %v\nwant an error containing %q", err, tt.want)
			}
		})
	}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// TestKFPGraphInline: a graph given inline in a pipeline, with a task's
// component inline too (componentRef.spec).
func TestKFPGraphInline(t *testing.T) {
	p, err := Load("testdata/kfpgraph/inline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || p.Steps[0].Name != "g.add" {
		t.Fatalf("steps %+v, want g.add", p.Steps)
	}
	if diff := cmp.Diff(map[string]Binding{"a": {Literal: "2.5"}}, p.Steps[0].Bindings()); diff != "" {
		t.Errorf("g.add inputs (-want +got):\n%s", diff)
	}
}
