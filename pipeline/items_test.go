package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestItems(t *testing.T) {
	tests := []struct {
		list string
		want []string
		err  string
	}{
		{`[1.0, "a", {"b": 12345678901234567890, "a": [3, 1]}]`, []string{`1.0`, `"a"`, `{"b": 12345678901234567890, "a": [3, 1]}`}, ""},
		{`[]`, []string{}, ""},
		{`{"a": 1}`, nil, "expected a JSON list"},
		{`null`, nil, "expected a JSON list"},
		{`[1] [2]`, nil, "expected one JSON list"},
		{`3`, nil, "expected a JSON list"},
	}
	for _, tt := range tests {
		got, err := Items(tt.list)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Items(%s) error = %v, want %q", tt.list, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Items(%s): %v", tt.list, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Items(%s) (-want +got):\n%s", tt.list, diff)
		}
	}
}

func TestItemValue(t *testing.T) {
	item := `{"lr": 1.0, "name": "a \"b\"", "opt": {"beta": [0.9, 0.999]}, "big": 12345678901234567890}`
	tests := []struct{ field, want, err string }{
		{"", item, ""},
		{"lr", "1.0", ""},
		{"name", `a "b"`, ""},
		{"opt", `{"beta": [0.9, 0.999]}`, ""},
		{"opt.beta", `[0.9, 0.999]`, ""},
		{"big", "12345678901234567890", ""},
		{"nope", "", `the item has no field "nope"`},
		{"lr.x", "", `the item is not a JSON object with field "x"`},
	}
	for _, tt := range tests {
		got, err := ItemValue(item, tt.field)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ItemValue(%q) error = %v, want %q", tt.field, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ItemValue(%q) = %q, %v; want %q", tt.field, got, err, tt.want)
		}
	}
	if got, err := ItemValue(`"x y"`, ""); got != "x y" || err != nil {
		t.Errorf("a string item = %q, %v", got, err)
	}
}

func TestSplitIteration(t *testing.T) {
	tests := []struct {
		name string
		step string
		i    int
		ok   bool
	}{
		{"train[0]", "train", 0, true},
		{"train[12]", "train", 12, true},
		{"train", "", 0, false},
		{"train[]", "", 0, false},
		{"train[01]", "", 0, false},
		{"train[-1]", "", 0, false},
		{"train[+1]", "", 0, false},
		{"[1]", "", 0, false},
	}
	for _, tt := range tests {
		step, i, ok := SplitIteration(tt.name)
		if step != tt.step || i != tt.i || ok != tt.ok {
			t.Errorf("SplitIteration(%q) = %q, %d, %v", tt.name, step, i, ok)
		}
		if ok && IterationName(step, i) != tt.name {
			t.Errorf("IterationName(%q, %d) = %q", step, i, IterationName(step, i))
		}
	}
}

func TestLoadLoops(t *testing.T) {
	p, err := Load("testdata/loops/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.Steps {
		names = append(names, s.Name)
		if s.Finally != (s.Name == "report" || s.Name == "report2") {
			t.Errorf("step %s: Finally = %v", s.Name, s.Finally)
		}
	}
	if diff := cmp.Diff([]string{"literal", "byparam", "pick", "byoutput", "report", "report2"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pick"}, p.Deps("byoutput")); diff != "" {
		t.Errorf("Deps(byoutput) (-want +got):\n%s", diff)
	}
	b, err := p.Step("literal").ItemsBinding()
	if err != nil || b.Literal != `[{"lr":0.10,"tag":"x"},{"lr":1e-3,"tag":"y z"}]` {
		t.Errorf("literal items = %+v, %v", b, err)
	}
}
