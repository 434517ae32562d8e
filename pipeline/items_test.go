package pipeline

import (
	"errors"
	"path/filepath"
	"slices"
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

// TestProduct: a product's items are objects of every combination, the
// first list outermost, values as written; past MaxItems it is refused.
func TestProduct(t *testing.T) {
	got, err := Product([]string{"lr", "seed"}, [][]string{{"0.1", "1e-3"}, {"1", `"a b"`}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"lr":0.1,"seed":1}`, `{"lr":0.1,"seed":"a b"}`, `{"lr":1e-3,"seed":1}`, `{"lr":1e-3,"seed":"a b"}`}
	if !slices.Equal(got, want) {
		t.Errorf("Product = %v, want %v", got, want)
	}
	if got, err := Product([]string{"a"}, [][]string{{}}); err != nil || len(got) != 0 {
		t.Errorf("an empty list: %v, %v", got, err)
	}
	big := make([]string, 1000)
	for i := range big {
		big[i] = "1"
	}
	if _, err := Product([]string{"a", "b", "c"}, [][]string{big, big, big}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a product past MaxItems: %v", err)
	}
}

// TestProductItems: a list of an earlier list's item (or its field, a
// JSON list or a string holding one) is taken from that item, outer-major;
// lists differ in length and an empty one gives no item for its outer
// item; values as written.
func TestProductItems(t *testing.T) {
	lists := []ProductList{
		{Name: "o", Binding: Binding{Param: "p"}},
		{Name: "s", Binding: Binding{Literal: "[1e0, 2]"}},
		{Name: "i", Binding: Binding{Item: true, Field: "o.xs"}},
	}
	given := [][]string{{`{"xs":[1.0,"a"]}`, `{"xs":[]}`, `{"xs":"[3]"}`}, {"1e0", "2"}, nil}
	got, err := ProductItems(lists, given)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"o":{"xs":[1.0,"a"]},"s":1e0,"i":1.0}`, `{"o":{"xs":[1.0,"a"]},"s":1e0,"i":"a"}`,
		`{"o":{"xs":[1.0,"a"]},"s":2,"i":1.0}`, `{"o":{"xs":[1.0,"a"]},"s":2,"i":"a"}`,
		`{"o":{"xs":"[3]"},"s":1e0,"i":3}`, `{"o":{"xs":"[3]"},"s":2,"i":3}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProductItems (-want +got):\n%s", diff)
	}
	// The whole earlier item, a list of lists.
	got, err = ProductItems([]ProductList{{Name: "a", Binding: Binding{Literal: "[[1,2],[3]]"}}, {Name: "b", Binding: Binding{Item: true, Field: "a"}}}, [][]string{{"[1,2]", "[3]"}, nil})
	if want := []string{`{"a":[1,2],"b":1}`, `{"a":[1,2],"b":2}`, `{"a":[3],"b":3}`}; err != nil || !slices.Equal(got, want) {
		t.Errorf("a list of lists: %v, %v, want %v", got, err, want)
	}
	// Past MaxItems, counted before the last list too.
	big := make([]string, 1000)
	for i := range big {
		big[i] = `{"xs":[]}`
	}
	_, err = ProductItems([]ProductList{{Name: "a"}, {Name: "b"}, {Name: "c", Binding: Binding{Item: true, Field: "a.xs"}}}, [][]string{big, big, nil})
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a product past MaxItems: %v", err)
	}
	var pe *ProductError
	_, err = ProductItems([]ProductList{{Name: "a"}, {Name: "b", Binding: Binding{Item: true, Field: "a.xs"}}}, [][]string{{`{"xs":{}}`}, nil})
	if !errors.As(err, &pe) || pe.List != "b" {
		t.Errorf("a field that is no list: %v, want a ProductError of list b", err)
	}
}

// TestLoopProductInvalid: a product with items too, a list that is not
// one, a param that is no json, and an item field no combination has are
// refused at their place; a nested pipeline's param given a list loops
// over it.
func TestLoopProductInvalid(t *testing.T) {
	const head = "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: g}\nparams:\n  n: {type: int, default: 1}\nsteps:\n  - name: s\n    component: {metadata: {name: c}, inputs: [{name: x, type: string}], command: [c, \"{{inputs.x}}\"]}\n"
	for _, tc := range []struct{ loop, input, want string }{
		{"{product: {a: [1]}, items: [1]}", "{{item.a}}", "9:5: steps[0].loop: loop has both items and product"},
		{"{product: {a: 3}}", "x", `9:25: steps[0].loop.product.a: cannot loop over "3": expected a list`},
		{"{product: {a: [[1]], b: \"{{item.c}}\"}}", "x", `9:35: steps[0].loop.product.b: {{item.c}} names "c", which is no list before it (want one of a)`},
		{"{product: {b: \"{{item.a.xs}}\", a: [{xs: [1]}]}}", "x", `9:25: steps[0].loop.product.b: {{item.a.xs}} names "a", which is no list before it (the first list has none)`},
		{"{product: {a: [{xs: [1]}, {ys: [2]}], b: \"{{item.a.xs}}\"}}", "x", `9:52: steps[0].loop.product.b: {{item.a.xs}}: the item has no field "xs": "{\"a\":{\"ys\":[2]}}"`},
		{"{product: {a: [{xs: 1}], b: \"{{item.a.xs}}\"}}", "x", `9:39: steps[0].loop.product.b: {{item.a.xs}} of "{\"a\":{\"xs\":1}}": expected a JSON list, got "1"`},
		{"{product: {a: [1], b: \"{{steps.t.outputs.o}}\"}}", "x", `steps[0].loop.product.b: unknown step "t"`},
		{"{product: {a: [{xs: [1]}], b: \"{{item.a.xs}}\"}}", "{{item.b.z}}", `item 0 of the loop has no field "b.z" (item 0: "{\"a\":{\"xs\":[1]},\"b\":1}")`},
		{"{product: {a: \"{{params.n}}\"}}", "x", `steps[0].loop.product.a: cannot loop over parameter "n": it is int, expected json`},
		{"{product: {a: [1], b: [2]}}", "{{item.c}}", `item 0 of the loop has no field "c" (item 0: "{\"a\":1,\"b\":2}")`},
		{"{product: []}", "x", "steps[0].loop.product: expected a mapping of names to lists"},
	} {
		_, err := Parse(filepath.Join(t.TempDir(), "p.yaml"), []byte(head+"    loop: "+tc.loop+"\n    inputs: {x: \""+tc.input+"\"}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("loop %s: %v, want %q", tc.loop, err, tc.want)
		}
	}
}
